package dev.leasehold.testing.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

import org.junit.jupiter.api.Test;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;

/**
 * The suite rule catches what it is for, and only that. Its fixtures below are never run; they
 * are classes for the rule to read (this module does not check its own tests with it).
 */
class SuiteRulesTests {

    @Test
    void aUnitTestThatOpensASocketIsCaught() {
        assertThatThrownBy(() -> check(OpensASocketTests.class))
                .hasMessageContaining("OpensASocketTests reaches java.net.ServerSocket");
    }

    @Test
    void aUnitTestThatReachesASocketThroughAHelperIsCaughtWithThePath() {
        assertThatThrownBy(() -> check(UsesAHelperTests.class, SocketHelper.class))
                .hasMessageContaining("reaches java.net.Socket")
                .hasMessageContaining("UsesAHelperTests -> SocketHelper");
    }

    @Test
    void aUnitTestThatStartsAProcessIsCaught() {
        assertThatThrownBy(() -> check(StartsAProcessTests.class)).hasMessageContaining("java.lang.ProcessBuilder");
    }

    @Test
    void anIntegrationTestMayOpenSockets() {
        check(OpensASocketIntegrationTests.class, NamesASocketTests.class); // one unit test, so the rule has a class to check
    }

    @Test
    void aSocketAsAParameterTypeOpensNothing() {
        check(NamesASocketTests.class);
    }

    @Test
    void anAddressIsNoSocket() {
        check(UsesAnAddressTests.class);
    }

    @Test
    void namesOfForbiddenClassesMatchExactlyOrByPackage() {
        assertThat(SuiteRules.isOutOfProcessOrNetwork("java.net.Socket")).isTrue();
        assertThat(SuiteRules.isOutOfProcessOrNetwork("java.net.SocketAddress")).isFalse();
        assertThat(SuiteRules.isOutOfProcessOrNetwork("reactor.netty.tcp.TcpServer")).isTrue();
        assertThat(SuiteRules.isOutOfProcessOrNetwork("java.net.http.HttpClient")).isTrue();
    }

    @Test
    void theRerunLineNamesTheRunnerTheSuffixPicks() {
        assertThat(Seeds.rerun("RegistryFuzzTests")).isEqualTo("./mvnw test -Dtest=RegistryFuzzTests");
        assertThat(Seeds.rerun("SoakIntegrationTests")).startsWith("./mvnw verify -Dit.test=SoakIntegrationTests");
    }

    private static void check(Class<?>... classes) {
        JavaClasses imported = new ClassFileImporter().importClasses(classes);
        SuiteRules.unitTestsStayInProcess().check(imported);
    }
}

class OpensASocketTests {
    void run() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            s.getLocalPort();
        }
    }
}

class OpensASocketIntegrationTests {
    void run() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            s.getLocalPort();
        }
    }
}

class SocketHelper {
    static void connect() throws IOException {
        try (Socket s = new Socket("localhost", 1)) {
            s.getPort();
        }
    }
}

class UsesAHelperTests {
    void run() throws IOException {
        SocketHelper.connect();
    }
}

class StartsAProcessTests {
    void run() throws IOException {
        new ProcessBuilder("true").start();
    }
}

class NamesASocketTests {
    String alias(String[] types, Socket socket) {
        return types[0];
    }
}

class UsesAnAddressTests {
    Object address() {
        return InetSocketAddress.createUnresolved("leasehold.invalid", 1);
    }
}
