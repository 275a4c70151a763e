package dev.leasehold.server;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.leasehold.config.DataDirectoryFailureAnalyzer;
import dev.leasehold.protocol.Answer;
import dev.leasehold.protocol.Request;
import dev.leasehold.store.DataDirectoryException;
import dev.leasehold.store.DurableFiles;
import dev.leasehold.store.StorageStatus;
import dev.leasehold.testing.FailingDisk;
import dev.leasehold.testing.RawClient;
import dev.leasehold.testing.TestServer;
import dev.leasehold.testing.Tmpfs;
import dev.leasehold.testing.support.Wait;

/**
 * Data-directory failures end to end (PROTOCOL.md 6.2, section 8): at run time
 * no grant goes out with a token that is not on disk (those Acquires get B), every
 * StorageStatus bean reports the problem, and the server recovers by itself; at start-up an
 * unusable directory stops the server with a message naming the path.
 *
 * <p>Two ways to break the disk: the {@link FailingDisk} seam (always; write() throws the
 * IOException of a full disk), and a real tiny tmpfs filled up or remounted read-only (only
 * where this JVM may mount, e.g. root on the CI machine; skipped elsewhere). chmod is no use:
 * the tests run as root.
 */
class StorageFailureIntegrationTests {

    static final FailingDisk DISK = new FailingDisk();

    @Configuration(proxyBeanMethods = false)
    static class FailingDiskConfig {
        @Bean
        DurableFiles failingDisk() {
            return DISK;
        }
    }

    final List<AutoCloseable> cleanup = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        DISK.failing.set(false);
        for (int i = cleanup.size() - 1; i >= 0; i--) {
            cleanup.get(i).close();
        }
    }

    @Test
    void failingWritesGiveBusyOnlyAfterThePersistedTokensAreUsedThenRecoverByThemselves() throws Exception {
        TestServer server = TestServer.start(Map.of("leasehold.token-block-size", "4"), FailingDiskConfig.class);
        cleanup.add(server);
        RawClient c = new RawClient(server.port());
        cleanup.add(c);
        long highest = grant(c, "warm-up");

        DISK.failing.set(true);
        List<Answer> answers = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            answers.add(acquireRelease(c, "during-" + i));
        }
        // A few grants still use tokens that were already on disk; after that only B, never an A
        // with an unpersisted token.
        long granted = answers.stream().filter(a -> a instanceof Answer.Acquired).count();
        assertThat(granted).isBetween(1L, 4L);
        assertThat(answers.subList((int) granted, answers.size())).allSatisfy(a -> assertThat(a).isInstanceOf(Answer.Busy.class));
        for (Answer a : answers) {
            if (a instanceof Answer.Acquired acq) {
                assertThat(acq.token()).isGreaterThan(highest);
                highest = acq.token();
            }
        }
        // 20 s, was 3 s: the store's writer thread meets the failure at its next write (a loaded disk's fsync can take seconds).
        Wait.until("the server's storage to report a problem", Duration.ofSeconds(20), () -> problems(server), Optional::isPresent);
        assertThat(problems(server).get()).contains(server.dataDir().resolve("tokens").toString())
                .contains("No space left on device");

        // The disk comes back: the store retries on its own (no traffic needed), health clears.
        DISK.failing.set(false);
        // 20 s, was 5 s: the store retries once a second, each retry an fsync on a loaded disk.
        Wait.until("the server's storage problem to clear", Duration.ofSeconds(20), () -> problems(server), Optional::isEmpty);
        long after = grant(c, "after");
        assertThat(after).isGreaterThan(highest);
    }

    @Test
    void aRealFullThenReadOnlyDiskIsSurvived() throws Exception {
        Tmpfs fs = Tmpfs.tryMount("256k");
        assumeTrue(fs != null, "cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN); the seam test covers this");
        cleanup.add(fs);
        TestServer server = TestServer.start(Map.of("leasehold.token-block-size", "4",
                "leasehold.data-dir", fs.dir().toString()));
        cleanup.add(server);
        RawClient c = new RawClient(server.port());
        cleanup.add(c);
        long highest = grant(c, "warm-up");

        fs.fill();
        highest = untilBusy(c, highest);
        Wait.until("the server's storage to report the full disk", Duration.ofSeconds(20), () -> problems(server), Optional::isPresent);
        assertThat(problems(server).get()).contains(fs.dir().toString()).contains("No space left on device");
        fs.free();
        Wait.until("the server's storage problem to clear after the disk was freed", Duration.ofSeconds(20), () -> problems(server), Optional::isEmpty);
        highest = Math.max(highest, grant(c, "after-full"));

        fs.readOnly(true);
        highest = untilBusy(c, highest);
        Wait.until("the server's storage to report the read-only disk", Duration.ofSeconds(20), () -> problems(server), Optional::isPresent);
        assertThat(problems(server).get()).contains("Read-only file system");
        fs.readOnly(false);
        Wait.until("the server's storage problem to clear after the disk was writable again", Duration.ofSeconds(20), () -> problems(server), Optional::isEmpty);
        assertThat(grant(c, "after-ro")).isGreaterThan(highest);
    }

    @Test
    void startUpFailsNamingTheDirectoryWhenItIsFullReadOnlyNotADirectoryOrHoldsACorruptTokenFile() throws Exception {
        Path parent = Files.createTempDirectory("leasehold-bad");
        cleanup.add(() -> TestServer.deleteTree(parent));
        Path file = Files.writeString(parent.resolve("plain-file"), "x");
        assertStartFails(file, file + " is not a directory");
        assertStartFails(file.resolve("data"), file.resolve("data") + " cannot be created");

        Path corrupt = Files.createDirectories(parent.resolve("corrupt"));
        Files.writeString(corrupt.resolve("tokens"), "leasehold-tokens v1\n12\n0\n");
        assertStartFails(corrupt, corrupt.resolve("tokens") + ": checksum mismatch");

        Tmpfs fs = Tmpfs.tryMount("64k");
        if (fs != null) { // real ENOSPC and EROFS where mounting is allowed
            cleanup.add(fs);
            fs.fill();
            assertStartFails(fs.dir(), fs.dir() + " is not writable")
                    .contains("No space left on device");
            fs.free();
            fs.readOnly(true);
            assertStartFails(fs.dir(), fs.dir() + " is not writable").contains("Read-only file system");
        }
    }

    /** Starts a server on {@code dir}, expects start-up to fail, returns the failure report. */
    private static org.assertj.core.api.AbstractStringAssert<?> assertStartFails(Path dir, String expected) {
        Throwable[] thrown = new Throwable[1];
        assertThatThrownBy(() -> TestServer.start(Map.of("leasehold.data-dir", dir.toString())))
                .satisfies(t -> thrown[0] = t);
        DataDirectoryException cause = findCause(thrown[0]);
        assertThat(cause).as("cause of %s", thrown[0]).isNotNull();
        assertThat(cause.getMessage()).contains(expected);
        // What Spring Boot prints instead of a stack trace ("APPLICATION FAILED TO START").
        FailureAnalysis analysis = new DataDirectoryFailureAnalyzer().analyze(thrown[0]);
        assertThat(analysis.getDescription()).contains(expected);
        assertThat(analysis.getAction()).isNotBlank();
        return assertThat(analysis.getDescription());
    }

    private static DataDirectoryException findCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof DataDirectoryException d) {
                return d;
            }
        }
        return null;
    }

    private static Optional<String> problems(TestServer server) {
        return server.context().getBeansOfType(StorageStatus.class).values().stream()
                .map(StorageStatus::problem).flatMap(Optional::stream).reduce((a, b) -> a + "; " + b);
    }

    /** Acquires and releases until the server answers B; returns the highest token granted. */
    private static long untilBusy(RawClient c, long highest) throws IOException {
        for (int i = 0; i < 20; i++) {
            Answer a = acquireRelease(c, "fill-" + i);
            if (a instanceof Answer.Busy) {
                return highest;
            }
            long token = ((Answer.Acquired) a).token();
            assertThat(token).isGreaterThan(highest);
            highest = token;
        }
        throw new AssertionError("never Busy with a broken disk");
    }

    private static long grant(RawClient c, String key) throws IOException {
        Answer a = acquireRelease(c, key);
        assertThat(a).isInstanceOf(Answer.Acquired.class);
        return ((Answer.Acquired) a).token();
    }

    private static Answer acquireRelease(RawClient c, String key) throws IOException {
        byte[] k = key.getBytes(UTF_8);
        c.send(new Request.Acquire(0, 5, 7, k));
        Answer a = c.next();
        if (a instanceof Answer.Acquired acq) {
            c.send(new Request.Release(acq.token(), k));
            assertThat(c.next()).isInstanceOf(Answer.Released.class);
        }
        return a;
    }
}
