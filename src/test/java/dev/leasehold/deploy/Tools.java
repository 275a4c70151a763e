package dev.leasehold.deploy;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/** Finds a command on the PATH (promtool, prometheus) for tests that skip without it. */
final class Tools {

    private Tools() {
    }

    /** The executable {@code name} on the PATH, or null. */
    static Path find(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }
}
