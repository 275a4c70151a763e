package dev.leasehold.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.leasehold.testing.FaultProxy;
import dev.leasehold.testing.TestServer;

/**
 * The set-up the client's revision 1.4 integration tests share, per test: a {@link FaultProxy} in
 * front of the class's real server, a client straight to the server, clients made through either,
 * a key named after the test, and everything closed after it (last made, first closed). Register
 * it as {@code @RegisterExtension final ClientFixture fx = new ClientFixture(server, "prefix/");}.
 */
final class ClientFixture implements BeforeEachCallback, AfterEachCallback {

    private final TestServer.PerClass server;
    private final String keyPrefix;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private FaultProxy proxy;
    private LeaseholdClient direct;
    private String key;

    ClientFixture(TestServer.PerClass server, String keyPrefix) {
        this.server = server;
        this.keyPrefix = keyPrefix;
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        proxy = closeLater(FaultProxy.start(server.port()));
        direct = client(ClientOptions.builder(), new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()));
        key = keyPrefix + context.getRequiredTestMethod().getName();
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        closeables.clear();
    }

    /** The proxy in front of the server, fresh for each test. */
    FaultProxy proxy() {
        return proxy;
    }

    /** A client with default options, straight to the server. */
    LeaseholdClient direct() {
        return direct;
    }

    /** This test's key. */
    String key() {
        return key;
    }

    /** A client through the proxy. */
    LeaseholdClient viaProxy(ClientOptions.Builder options) {
        return client(options, proxy.address());
    }

    /** A client to these addresses, closed after the test. */
    LeaseholdClient client(ClientOptions.Builder options, InetSocketAddress... addresses) {
        return closeLater(LeaseholdClient.create(options.build(), List.of(addresses)));
    }

    /** Closes {@code c} after the test, before what was registered earlier. */
    <T extends AutoCloseable> T closeLater(T c) {
        closeables.add(c);
        return c;
    }

    /** The ticket of an Acquired outcome (the assertion fails on any other). */
    static Ticket ticket(AcquireOutcome o) {
        assertThat(o).isInstanceOf(AcquireOutcome.Acquired.class);
        return ((AcquireOutcome.Acquired) o).ticket();
    }
}
