package dev.leasehold.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Prepares {@code leasehold.data-dir} at start-up, failing with a message that names the path. */
public final class DataDirectory {

    private DataDirectory() {
    }

    /** Creates the directory if missing and checks it can be written. */
    public static Path prepare(Path dir) {
        Path abs = dir.toAbsolutePath().normalize();
        try {
            Files.createDirectories(abs);
        } catch (IOException e) {
            throw new IllegalStateException("leasehold.data-dir " + abs + " cannot be created: " + e, e);
        }
        if (!Files.isDirectory(abs)) {
            throw new IllegalStateException("leasehold.data-dir " + abs + " is not a directory");
        }
        Path probe = abs.resolve(".write-probe");
        try {
            Files.write(probe, new byte[] {1});
            Files.delete(probe);
        } catch (IOException e) {
            throw new IllegalStateException("leasehold.data-dir " + abs + " is not writable: " + e, e);
        }
        return abs;
    }
}
