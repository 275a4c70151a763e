package dev.leasehold.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Reads a process's CPU time and resident memory from /proc (Linux only). */
final class Proc {

    private static final double TICKS_PER_SECOND = 100.0; // USER_HZ, `getconf CLK_TCK` on Linux

    private Proc() {
    }

    /** utime + stime of {@code pid} in seconds (10 ms resolution); "self" for this JVM. */
    static double cpuSeconds(String pid) {
        double[] us = cpuUserSys(pid);
        return us[0] + us[1];
    }

    /** {utime, stime} of {@code pid} in seconds; a comma-separated list sums the processes. */
    static double[] cpuUserSys(String pid) {
        if (pid.contains(",")) {
            double[] sum = new double[2];
            for (String p : pid.split(",")) {
                double[] us = cpuUserSys(p);
                sum[0] += us[0];
                sum[1] += us[1];
            }
            return sum;
        }
        try {
            String stat = Files.readString(Path.of("/proc", pid, "stat"));
            // Fields after the command name, which is in parentheses and may contain spaces.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long utime = Long.parseLong(f[11]);
            long stime = Long.parseLong(f[12]);
            return new double[] { utime / TICKS_PER_SECOND, stime / TICKS_PER_SECOND };
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc/" + pid + "/stat: " + e.getMessage(), e);
        }
    }

    /** VmRSS of {@code pid} in bytes; a comma-separated list sums the processes. */
    static long rssBytes(String pid) {
        if (pid.contains(",")) {
            long sum = 0;
            for (String p : pid.split(",")) {
                sum += rssBytes(p);
            }
            return sum;
        }
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc", pid, "status"));
            for (String l : lines) {
                if (l.startsWith("VmRSS:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", "")) * 1024;
                }
            }
            throw new IllegalStateException("no VmRSS in /proc/" + pid + "/status");
        } catch (IOException e) {
            throw new IllegalStateException("cannot read /proc/" + pid + "/status: " + e.getMessage(), e);
        }
    }

    /** Load average over the last minute. */
    static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "?";
        }
    }

    /**
     * Bytes of live objects on the heap of JVM {@code pid}, from {@code jcmd GC.class_histogram}
     * (which runs a full GC first). -1 if jcmd is not available.
     */
    static long liveHeapBytes(String pid) {
        try {
            Process p = new ProcessBuilder("jcmd", pid, "GC.class_histogram").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            for (String l : out.split("\n")) {
                if (l.startsWith("Total")) {
                    String[] f = l.trim().split("\\s+");
                    return Long.parseLong(f[2]);
                }
            }
            return -1;
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
