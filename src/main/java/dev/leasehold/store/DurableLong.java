package dev.leasehold.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.OptionalLong;
import java.util.zip.CRC32;

/**
 * One number kept in a small text file that survives crashes: a new value is written to a temp
 * file, fsync'd, atomically renamed over the old one, and the directory is fsync'd, so after
 * {@code kill -9} or power loss the file holds either the old or the new value, never a torn one.
 * A checksum line catches a file damaged by other means.
 *
 * <p>Blocking I/O: call only from a thread made for it, or at start-up.
 */
public final class DurableLong implements DurableValue {

    private final Path file;
    private final String kind;

    /**
     * @param kind a word identifying the content (first line of the file), e.g. "tokens"
     */
    public DurableLong(Path file, String kind) {
        this.file = file;
        this.kind = kind;
    }

    @Override
    public Path file() {
        return file;
    }

    /**
     * The stored value, or empty if the file does not exist.
     *
     * @throws CorruptStateException if the file exists but is not a value written by this class
     */
    @Override
    public OptionalLong read() throws IOException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return OptionalLong.empty();
        }
        String[] lines = text.split("\n");
        if (lines.length != 3 || !lines[0].equals("leasehold-" + kind + " v1")) {
            throw new CorruptStateException(file, "not a Leasehold " + kind + " file (unexpected content)");
        }
        long value;
        try {
            value = Long.parseLong(lines[1]);
        } catch (NumberFormatException e) {
            throw new CorruptStateException(file, "value is not a number");
        }
        if (!lines[2].equals(checksum(lines[0], value))) {
            throw new CorruptStateException(file, "checksum mismatch (the file was damaged)");
        }
        return OptionalLong.of(value);
    }

    /** Durably replaces the value; when this returns, a crash cannot lose it. */
    @Override
    public void write(long value) throws IOException {
        String header = "leasehold-" + kind + " v1";
        byte[] bytes = (header + "\n" + value + "\n" + checksum(header, value) + "\n")
                .getBytes(StandardCharsets.UTF_8);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            throw new IOException("the file system of " + file.getParent() + " cannot rename atomically", e);
        }
        syncDirectory(file.toAbsolutePath().getParent());
    }

    /** Makes the rename itself durable (Linux: fsync on the directory). */
    private static void syncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    private static String checksum(String header, long value) {
        CRC32 crc = new CRC32();
        crc.update((header + ":" + value).getBytes(StandardCharsets.UTF_8));
        return Long.toHexString(crc.getValue());
    }
}
