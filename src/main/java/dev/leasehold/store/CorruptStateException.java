package dev.leasehold.store;

import java.io.IOException;
import java.nio.file.Path;

/** A state file exists but cannot be trusted. The server refuses to start rather than guess. */
public class CorruptStateException extends IOException {

    public CorruptStateException(Path file, String what) {
        super(file.toAbsolutePath() + ": " + what
                + ". Refusing to start: restore the file, or delete it only if no other server used this data directory");
    }
}
