package dev.leasehold.protocol;

/** The peer sent bytes that are not a valid frame of protocol v1. */
public class ProtocolException extends Exception {

    public ProtocolException(String message) {
        super(message);
    }
}
