package dev.leasehold.store;

import java.nio.file.Path;

/**
 * The data directory (or a state file in it) cannot be used: start-up stops with this, and
 * the message names the path and what is wrong.
 */
public class DataDirectoryException extends IllegalStateException {

    private final Path path;
    private final String action;

    public DataDirectoryException(Path path, String message, String action, Throwable cause) {
        super(message, cause);
        this.path = path;
        this.action = action;
    }

    /** The directory or file at fault. */
    public Path path() {
        return path;
    }

    /** What the operator can do about it. */
    public String action() {
        return action;
    }
}
