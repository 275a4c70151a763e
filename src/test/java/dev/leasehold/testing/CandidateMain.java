package dev.leasehold.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

import dev.leasehold.client.Campaign;
import dev.leasehold.client.CampaignListener;
import dev.leasehold.client.ElectionOptions;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Leadership;
import dev.leasehold.client.StopReason;

/**
 * One election candidate in a JVM of its own, for tests that must {@code kill -9} or {@code SIGSTOP}
 * a leader ({@link CandidateProcess} launches it). While it leads it writes to a
 * {@link TermFencedStore} with its term, as a real leader writes to the resource it guards, checking
 * {@link Leadership#isValid()} before each step of work and writing after it (a pause between the
 * check and the write is what the store's fencing is for). It reports on stdout, one line each:
 * {@code START term nanos untilNanos}, {@code VALID term untilNanos} (whenever its validity moves on),
 * {@code STOP term nanos untilNanos reason}, {@code WROTE term accepted refused}; nanos are
 * {@link System#nanoTime()}, which on Linux is one clock for every process of the machine. On stdin
 * it takes {@code RESIGN} (resign the current term) and {@code CLOSE} (close the campaign and the
 * client, then exit 0); the end of stdin (its parent died) exits too.
 *
 * <p>Arguments: {@code servers key identity leaseSeconds storePort}.
 */
public final class CandidateMain {

    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    private CandidateMain() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        String servers = args[0];
        String key = args[1];
        String identity = args[2];
        int lease = Integer.parseInt(args[3]);
        int storePort = Integer.parseInt(args[4]);
        LeaseholdClient client = LeaseholdClient.create(servers.split(","));
        AtomicReference<Leadership> current = new AtomicReference<>();
        Map<Long, Thread> writers = new ConcurrentHashMap<>();
        Campaign campaign = client.election(key, identity, ElectionOptions.defaults().withLeaseSeconds(lease))
                .campaign(new CampaignListener() {
                    @Override
                    public void onStartedLeading(Leadership l) {
                        say("START " + l.term() + " " + System.nanoTime() + " " + l.validUntilNanos());
                        current.set(l);
                        Thread writer = new Thread(() -> write(l, storePort, identity), "writer-" + l.term());
                        writer.setDaemon(true);
                        writers.put(l.term(), writer);
                        writer.start();
                    }

                    @Override
                    public void onStoppedLeading(Leadership l, StopReason reason) {
                        say("STOP " + l.term() + " " + System.nanoTime() + " " + l.validUntilNanos() + " " + reason);
                        // The term's work ends before this returns: the release (and the next term) follow it.
                        Thread writer = writers.remove(l.term());
                        if (writer != null) {
                            try {
                                writer.join(5_000);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    }
                });
        say("READY " + identity);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.equals("RESIGN")) {
                Leadership l = current.get();
                if (l != null) {
                    l.resign();
                }
            } else if (line.equals("CLOSE")) {
                break;
            }
        }
        campaign.close();
        client.close();
        say("CLOSED");
        System.exit(0);
    }

    /**
     * The leader's work: a write every few milliseconds while the term is valid (a bounded loop: it
     * ends with the term), and a {@code VALID} line whenever an Extend moved the validity on.
     */
    private static void write(Leadership l, int storePort, String identity) {
        long accepted = 0;
        long refused = 0;
        long reported = 0;
        try (TermFencedStore.Connection store = TermFencedStore.connect(storePort)) {
            while (l.isValid()) {
                if (l.validUntilNanos() != reported) {
                    reported = l.validUntilNanos();
                    say("VALID " + l.term() + " " + reported);
                }
                // The work between the check and the write: a pause that lands here (SIGSTOP, GC)
                // wakes up to write with a term that has ended, which only the store can refuse.
                Thread.sleep(20); // the step of work itself: a leader busy for 20 ms between check and write
                if (store.write(l.term(), identity)) {
                    accepted++;
                } else {
                    refused++;
                }
            }
        } catch (IOException | InterruptedException e) {
            say("WRITER " + l.term() + " " + e);
        }
        say("WROTE " + l.term() + " " + accepted + " " + refused);
    }

    private static synchronized void say(String line) {
        OUT.println(line);
    }
}
