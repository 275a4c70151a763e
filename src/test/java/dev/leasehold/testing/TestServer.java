package dev.leasehold.testing;

import java.io.IOException;
import java.util.Map;

/** TEMPORARY shim until the real fixture lands on main: backed by the fake server. */
public final class TestServer implements AutoCloseable {
    private final FakeLockServer fake;

    private TestServer(FakeLockServer fake) {
        this.fake = fake;
    }

    public static TestServer start(Map<String, String> extraProperties) {
        try {
            return new TestServer(FakeLockServer.start());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public int port() {
        return fake.port();
    }

    @Override
    public void close() {
        try {
            fake.close();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
