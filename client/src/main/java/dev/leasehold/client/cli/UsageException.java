package dev.leasehold.client.cli;

/** A bad command line; the message is the one line shown on stderr. */
final class UsageException extends Exception {

    private static final long serialVersionUID = 1L;

    UsageException(String message) {
        super(message, null, false, false);
    }
}
