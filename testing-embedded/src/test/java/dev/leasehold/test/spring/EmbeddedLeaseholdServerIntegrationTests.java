package dev.leasehold.test.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.junit.jupiter.SpringJUnitConfig;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.test.TestingServer;

@SpringJUnitConfig(EmbeddedLeaseholdServerIntegrationTests.Empty.class)
@EmbeddedLeaseholdServer
class EmbeddedLeaseholdServerIntegrationTests {

    @Configuration(proxyBeanMethods = false)
    static class Empty {
    }

    @Value("${leasehold.client.servers}")
    String servers;

    @Autowired
    TestingServer server;

    @Test
    void thePropertyNamesTheRunningServer() {
        assertThat(servers).isEqualTo(server.address());
        try (LeaseholdClient client = LeaseholdClient.create(servers)) {
            assertThat(client.acquire("spring", 0, 30)).isInstanceOf(AcquireOutcome.Acquired.class);
        }
    }
}
