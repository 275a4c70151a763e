package dev.leasehold.test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.leasehold.client.LeaseholdClient;

/**
 * A real Leasehold server in this JVM for an application's tests: the server's own registry,
 * protocol server and data files, on {@code 127.0.0.1} and a free port, with a fresh temporary
 * data directory. No Spring context, no Actuator, no metrics endpoint: it starts in a fraction
 * of a second. {@link #close()} stops it, closes the clients it made and deletes the directory.
 *
 * <pre>{@code
 * try (TestingServer server = TestingServer.start()) {
 *     LeaseholdClient client = server.client();
 *     ...
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one test thread starts, restarts and closes it; the clients it hands out
 * are thread-safe as always.
 */
public final class TestingServer implements AutoCloseable {

    private final Path dataDir;
    private final List<LeaseholdClient> clients = new ArrayList<>();
    private EmbeddedNode node;
    private int port;

    private TestingServer(Path dataDir) {
        this.dataDir = dataDir;
    }

    /** Starts a server on a free loopback port with a new temporary data directory. */
    public static TestingServer start() {
        TestingServer server = new TestingServer(TempFiles.newDirectory("leasehold-test"));
        try {
            server.startNode(0);
        } catch (RuntimeException e) {
            TempFiles.deleteTree(server.dataDir);
            throw e;
        }
        return server;
    }

    private void startNode(int bindPort) {
        EmbeddedNode n = EmbeddedNode.single(dataDir.resolve("data"), bindPort);
        n.start();
        node = n;
        port = n.port();
    }

    /** The protocol port. */
    public int port() {
        return port;
    }

    /** {@code 127.0.0.1:<port>}: what {@code leasehold.client.servers} or {@link LeaseholdClient#create(String...)} takes. */
    public String address() {
        return "127.0.0.1:" + port;
    }

    /** The data directory (the {@code tokens} and {@code lease-horizon} files live under it). */
    public Path dataDirectory() {
        return dataDir;
    }

    /**
     * A client of this server with the default options, closed with the server (or earlier by
     * the test). Each call makes a new one: one per simulated application instance.
     */
    public LeaseholdClient client() {
        LeaseholdClient client = LeaseholdClient.create(address());
        clients.add(client);
        return client;
    }

    /**
     * Stops the server as a shutdown does (queued Acquires get {@code B}, sessions close, every
     * lease ends with them) and starts it again on the same port and data directory, as a process
     * restart would: fencing tokens continue above every token issued before, and the recovery
     * grace holds every key until the longest lease the previous run granted could have ended
     * (a test that restarts should use short leases, or wait that long in its Acquire).
     */
    public void restart() {
        stop();
        startNode(port);
    }

    /** Stops the server, keeping the port and data; {@link #restart()} starts it again. */
    public void stop() {
        if (node != null) {
            EmbeddedNode n = node;
            node = null;
            n.stop();
        }
    }

    /**
     * Acquires queued on the server now, in every key's queue: for a test that must know a second
     * caller is waiting before it releases (poll it with a bounded wait).
     *
     * @throws IllegalStateException if the server is stopped
     */
    public int waiters() {
        EmbeddedNode n = node;
        if (n == null) {
            throw new IllegalStateException(this + " is stopped");
        }
        return n.waiters();
    }

    /** True while the server runs. */
    public boolean isRunning() {
        return node != null;
    }

    /** Closes the clients it made, stops the server and deletes its data directory. */
    @Override
    public void close() {
        try {
            clients.forEach(LeaseholdClient::close);
            clients.clear();
            stop();
        } finally {
            TempFiles.deleteTree(dataDir);
        }
    }

    @Override
    public String toString() {
        return "TestingServer[" + address() + (isRunning() ? "" : ", stopped") + "]";
    }
}
