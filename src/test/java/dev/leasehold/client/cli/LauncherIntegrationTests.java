package dev.leasehold.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code bin/leasehold} launcher finds a client jar (as the client module builds it: the
 * client and protocol classes, {@code Main-Class} set) in {@code ../client/target}, in
 * {@code ../target} (older name) or next to itself, and says so
 * when there is none.
 */
class LauncherIntegrationTests {

    @TempDir
    Path dir;

    @Test
    void findsTheJarInTargetOrNextToItself() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Files.copy(Path.of("bin/leasehold"), bin.resolve("leasehold"));
        Path target = Files.createDirectories(dir.resolve("client/target"));
        clientJar(target.resolve("leasehold-client-9.9.9.jar"));

        Result help = launch(bin.resolve("leasehold"), "--help");
        assertThat(help.code).as(help.err).isZero();
        assertThat(help.out).startsWith("usage: leasehold");

        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        Result ping = launch(bin.resolve("leasehold"), "ping", "--timeout", "500ms", "--server",
                "127.0.0.1:" + closed);
        assertThat(ping.code).isEqualTo(68);
        assertThat(ping.err).startsWith("leasehold: unavailable");

        Path flat = Files.createDirectories(dir.resolve("flat"));
        Files.copy(Path.of("bin/leasehold"), flat.resolve("leasehold"));
        Files.move(target.resolve("leasehold-client-9.9.9.jar"), flat.resolve("leasehold-client-9.9.9.jar"));
        Result nextToIt = launch(flat.resolve("leasehold"), "ping", "--help");
        assertThat(nextToIt.code).isZero();
        assertThat(nextToIt.out).startsWith("usage: leasehold ping");

        Result none = launch(bin.resolve("leasehold"), "--help");
        assertThat(none.code).isEqualTo(127);
        assertThat(none.err).contains("cannot find leasehold-client-<version>.jar");
    }

    @Test
    void findsTheClientModulesJarInASourceCheckoutAndSkipsTheTestJar() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Files.copy(Path.of("bin/leasehold"), bin.resolve("leasehold"));
        Path target = Files.createDirectories(dir.resolve("client/target"));
        // sorts first, and is not runnable: the launcher must not pick it
        Files.writeString(target.resolve("leasehold-client-9.9.9-tests.jar"), "not a jar");
        clientJar(target.resolve("leasehold-client-9.9.9.jar"));

        Result help = launch(bin.resolve("leasehold"), "--help");
        assertThat(help.code).as(help.err).isZero();
        assertThat(help.out).startsWith("usage: leasehold");
    }

    private record Result(int code, String out, String err) {
    }

    private Result launch(Path script, String... args) throws Exception {
        Path out = dir.resolve("out");
        Path err = dir.resolve("err");
        List<String> cmd = new java.util.ArrayList<>(List.of("/bin/sh", script.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().remove("LEASEHOLD_JAR");
        Process p = pb.start();
        try {
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            p.destroyForcibly();
        }
    }

    /** Like the client module's jar: dev/leasehold/client/** and dev/leasehold/protocol/**, Main-Class. */
    private static void clientJar(Path jar) throws IOException {
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, Main.class.getName());
        Path classes = CliProcess.classes();
        if (Files.isRegularFile(classes)) { // the reactor gives the client module's jar itself
            Files.copy(classes, jar);
            assertThat(new String(Files.readAllBytes(jar), 0, 2, StandardCharsets.ISO_8859_1)).isEqualTo("PK");
            return;
        }
        try (OutputStream file = Files.newOutputStream(jar);
                JarOutputStream out = new JarOutputStream(file, manifest);
                Stream<Path> walk = Files.walk(classes.resolve("dev/leasehold"))) {
            for (Path p : (Iterable<Path>) walk::iterator) {
                String name = classes.relativize(p).toString().replace('\\', '/');
                if (Files.isRegularFile(p) && (name.startsWith("dev/leasehold/client/")
                        || name.startsWith("dev/leasehold/protocol/"))) {
                    out.putNextEntry(new JarEntry(name));
                    out.write(Files.readAllBytes(p));
                    out.closeEntry();
                }
            }
        }
        assertThat(new String(Files.readAllBytes(jar), 0, 2, StandardCharsets.ISO_8859_1)).isEqualTo("PK");
    }
}
