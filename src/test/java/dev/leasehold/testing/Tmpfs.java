package dev.leasehold.testing;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A small real tmpfs, for disk-full and read-only tests. Needs {@code mount} rights
 * (root with CAP_SYS_ADMIN, as on the CI machine); {@link #tryMount} returns null elsewhere, and
 * the test is skipped (the {@link FailingDisk} seam covers the same paths everywhere).
 */
public final class Tmpfs implements AutoCloseable {

    private final Path dir;
    private final Path filler;

    private Tmpfs(Path dir) {
        this.dir = dir;
        this.filler = dir.resolve("filler");
    }

    public static Tmpfs tryMount(String size) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("leasehold-tmpfs");
        if (run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0755", "tmpfs", dir.toString())) {
            return new Tmpfs(dir);
        }
        Files.delete(dir);
        return null;
    }

    public Path dir() {
        return dir;
    }

    /** Writes a filler file until the file system is full (ENOSPC). */
    public void fill() throws IOException {
        byte[] chunk = new byte[4096];
        try (OutputStream out = Files.newOutputStream(filler)) {
            while (true) {
                out.write(chunk);
                out.flush();
            }
        } catch (IOException full) {
            if (!String.valueOf(full.getMessage()).contains("No space left")) {
                throw full;
            }
        }
    }

    public void free() throws IOException {
        Files.deleteIfExists(filler);
    }

    public void readOnly(boolean ro) throws IOException, InterruptedException {
        if (!run("mount", "-o", "remount," + (ro ? "ro" : "rw"), dir.toString())) {
            throw new IOException("remount failed: " + dir);
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        run("umount", "-l", dir.toString());
        Files.deleteIfExists(dir);
    }

    private static boolean run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of(command)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return false;
        }
        return p.exitValue() == 0;
    }
}
