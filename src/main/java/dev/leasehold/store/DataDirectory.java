package dev.leasehold.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Prepares {@code leasehold.data-dir} at start-up, failing with a message that names the path. */
public final class DataDirectory {

    static final String FIX_DIRECTORY = "Point leasehold.data-dir at a writable directory on a persistent volume"
            + " (in Kubernetes: the PersistentVolumeClaim mounted at persistence.mountPath), or fix its"
            + " ownership and permissions for the server's user.";

    private DataDirectory() {
    }

    /** Creates the directory if missing and checks it can be written. */
    public static Path prepare(Path dir) {
        Path abs = dir.toAbsolutePath().normalize();
        if (Files.exists(abs) && !Files.isDirectory(abs)) {
            throw new DataDirectoryException(abs, "leasehold.data-dir " + abs + " is not a directory",
                    FIX_DIRECTORY, null);
        }
        try {
            Files.createDirectories(abs);
        } catch (IOException e) {
            throw new DataDirectoryException(abs, "leasehold.data-dir " + abs + " cannot be created: " + e,
                    FIX_DIRECTORY, e);
        }
        if (!Files.isDirectory(abs)) {
            throw new DataDirectoryException(abs, "leasehold.data-dir " + abs + " is not a directory",
                    FIX_DIRECTORY, null);
        }
        Path probe = abs.resolve(".write-probe");
        try {
            Files.write(probe, new byte[] {1});
            Files.delete(probe);
        } catch (IOException e) {
            throw new DataDirectoryException(abs, "leasehold.data-dir " + abs + " is not writable: " + e,
                    FIX_DIRECTORY, e);
        }
        return abs;
    }

    /**
     * Whether {@code dir} holds state of a previous run: the fencing-token file, the lease
     * horizon or its clean-stop marker. Call before anything is written. A directory without
     * them is a first start (PROTOCOL.md section 8), also when it holds other files (a fresh
     * volume's {@code lost+found}) or a leftover {@code .tmp}: no grant is ever made before the
     * {@code tokens} file is on disk, so such a directory cannot have a lease still running.
     */
    public static boolean holdsState(Path dir) {
        return Files.exists(dir.resolve("tokens")) || Files.exists(dir.resolve("lease-horizon"))
                || Files.exists(dir.resolve("clean-stop"));
    }

    /**
     * Wraps a failure to open or first write a state file, for start-up: a corrupt file needs
     * a person; any other I/O error is a directory problem.
     */
    public static DataDirectoryException openFailure(Path file, String what, IOException e) {
        if (e instanceof CorruptStateException) {
            return new DataDirectoryException(file, "leasehold.data-dir: " + e.getMessage(),
                    "Restore " + file + " from a backup. Delete it only if no server used this data directory"
                            + " before: deleting the fencing-token file lets tokens restart at 1.", e);
        }
        return new DataDirectoryException(file, "leasehold.data-dir: cannot " + what + " in " + file + ": " + e,
                FIX_DIRECTORY, e);
    }
}
