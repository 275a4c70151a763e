package dev.leasehold.testing;

import java.io.IOException;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.leasehold.store.DurableFiles;
import dev.leasehold.store.DurableLong;
import dev.leasehold.store.DurableValue;

/**
 * A disk that can be made to fail on demand. Tests run as root, so {@code chmod} cannot make the
 * data directory read-only, and there is no small tmpfs to fill: writes through this seam throw
 * the IOException a full disk would ({@code No space left on device}) while {@link #failing} is
 * set, and reach the real {@link DurableLong} otherwise.
 */
public final class FailingDisk implements DurableFiles {

    public final AtomicBoolean failing = new AtomicBoolean();
    public final AtomicInteger failedWrites = new AtomicInteger();

    @Override
    public DurableValue open(Path file, String kind) {
        return wrap(new DurableLong(file, kind));
    }

    public DurableValue wrap(DurableValue real) {
        return new DurableValue() {
            @Override
            public Path file() {
                return real.file();
            }

            @Override
            public OptionalLong read() throws IOException {
                return real.read();
            }

            @Override
            public void write(long value) throws IOException {
                if (failing.get()) {
                    failedWrites.incrementAndGet();
                    throw new IOException("No space left on device (simulated)");
                }
                real.write(value);
            }
        };
    }
}
