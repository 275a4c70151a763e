package dev.leasehold.server;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

import com.sun.management.UnixOperatingSystemMXBean;

import dev.leasehold.settings.SettingException;

/**
 * Fits {@code leasehold.max-connections} to the process's open-file limit ({@code ulimit -n}).
 * Every session is a file descriptor; so is every file of the data directory, every connection
 * to the management port (probes, Prometheus) and every jar, pipe and epoll instance of the JVM.
 * If sessions may use them all, the process fails where it hurts: new clients hang in the
 * accept queue (neither served nor refused), health and metrics time out, and the lease
 * horizon's write fails with "too many open files".
 *
 * <p>The rule: sessions may use the limit minus what is open at start minus a reserve of
 * {@code max(256, limit / 10)}. A larger setting is lowered to that, with a WARN; a limit that
 * leaves no room at all fails the start. A refused connection needs a descriptor for an
 * instant (it is accepted, then closed), which the reserve covers too.
 *
 * @param configured {@code leasehold.max-connections} as set
 * @param effective what the server enforces
 * @param fileLimit the open-file limit, or -1 if this platform does not tell
 * @param openAtStart descriptors open when it was computed, or -1
 * @param reserve descriptors kept out of the sessions' reach
 */
public record ConnectionBudget(int configured, int effective, long fileLimit, long openAtStart, long reserve) {

    /** Floor of the reserve: a small limit (1024) still keeps this many for everything else. */
    static final long MIN_RESERVE = 256;

    /** The budget for this process, read from the JVM's view of its descriptors. */
    public static ConnectionBudget forThisProcess(int configured) {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof UnixOperatingSystemMXBean unix) {
            return of(configured, unix.getMaxFileDescriptorCount(), unix.getOpenFileDescriptorCount());
        }
        return new ConnectionBudget(configured, configured, -1, -1, 0);
    }

    /**
     * @throws SettingException naming {@code leasehold.max-connections} when the limit
     *         leaves no descriptor for sessions
     */
    public static ConnectionBudget of(int configured, long fileLimit, long openAtStart) {
        if (fileLimit <= 0 || fileLimit == Long.MAX_VALUE) {
            return new ConnectionBudget(configured, configured, fileLimit, openAtStart, 0);
        }
        long reserve = Math.max(MIN_RESERVE, fileLimit / 10);
        long room = fileLimit - Math.max(0, openAtStart) - reserve;
        if (room < 1) {
            throw new SettingException("leasehold.max-connections", configured,
                    "the open-file limit (ulimit -n) is " + fileLimit + ", " + openAtStart + " are open and "
                    + reserve + " are kept for the data directory, the management port and the JVM, which leaves"
                    + " none for sessions; raise the limit (e.g. ulimit -n 65536, or LimitNOFILE in systemd)");
        }
        return new ConnectionBudget(configured, (int) Math.min(configured, room), fileLimit, openAtStart, reserve);
    }

    /** True when the setting was lowered to fit the limit. */
    public boolean lowered() {
        return effective < configured;
    }

    /** One line for the log. */
    public String describe() {
        if (fileLimit <= 0) {
            return "max-connections " + effective + " (open-file limit unknown on this platform)";
        }
        return "max-connections " + effective + (lowered() ? " (leasehold.max-connections=" + configured + " lowered)" : "")
                + ": open-file limit " + fileLimit + ", " + openAtStart + " open at start, " + reserve
                + " kept for the data directory, the management port and the JVM";
    }
}
