package dev.leasehold.client.cli;

/** The {@code --help} texts; docs/cli.md says the same at more length. */
final class Help {

    private static final String GLOBAL = """
            Global options (before or after the command):
              --server HOST:PORT[,HOST:PORT...]
                                 the server; default $LEASEHOLD_SERVER, else 127.0.0.1:7420
              --timeout DUR      how long to try to reach the server for ping, release, extend
                                 and --wait 0 acquires (default 5s)
              --tls              connect with TLS (implied by --cacert and --cert); the server
                                 certificate must name the host connected to
              --cacert FILE      trust these PEM CA certificates (default: the JDK's; or
                                 $LEASEHOLD_CACERT)
              --cert FILE --cert-key FILE
                                 client certificate chain (PEM) and unencrypted PKCS#8 key for
                                 mutual TLS (or $LEASEHOLD_CERT, $LEASEHOLD_CERT_KEY)
              -v, --verbose      progress lines on stderr
              -h, --help         help
            """;

    private static final String DURATIONS = """

            Durations: 500ms, 30s, 2m (a bare number is seconds).
            """;

    private static final String EXIT_CODES = """
            Exit codes: 0 done, 64 usage error, 65 timed out, 66 busy, 67 indeterminate,
              68 unavailable (server unreachable, nothing sent), 69 lock lost (run, elect),
              70 not held (release, extend) or not current (check), 71 internal error,
              72 refused (cluster change; nothing changed), 73 forbidden (the server's
              ACL refuses this key; no grant), 74 limit mismatch (--shared: the key is
              shared with another --limit; no grant),
              127 command not startable (run, elect).
            """;

    static final String MAIN = """
            usage: leasehold [--server HOST:PORT] COMMAND [OPTIONS]

            Commands:
              run      acquire a lock, run a command while holding it, release when it exits
              elect    campaign to lead a key, run a command while leading, resign when it exits
              acquire  acquire a lock and print its fencing token (held until release or lease end)
              release  release a token
              extend   extend a token's lease
              ping     check that the server answers
              check    ask whether a fencing token is still the key's active grant
              inspect  show who holds a key, since when, its lease and its waiters
              top      show the keys with the longest queues and the oldest grants
              observe  print a key's state now, then each change (who holds it, its value)
              cluster  list, add, remove or replace cluster members (run on a member)
              admin    snapshot save FILE: save the token floor (run on the node; the leader in a cluster)

            Run 'leasehold COMMAND --help' for a command's options.

            """ + GLOBAL + "  --json             one JSON object on stdout (acquire, release, extend, ping,\n"
            + "                     check, inspect, top; observe, elect: one per line)\n"
            + DURATIONS + "\n" + EXIT_CODES;

    static final String RUN = """
            usage: leasehold run --key KEY [--shared [--limit N] | --value TEXT] [--wait 30s] [--lease 30s] [--kill-grace 5s]
                                 -- CMD [ARGS...]

            Acquires KEY, runs CMD while holding it, and releases when CMD exits. CMD gets
              LEASEHOLD_KEY             the key
              LEASEHOLD_TOKEN           the fencing token: pass it to the resource you guard
              LEASEHOLD_VALID_UNTIL_MS  the lock's validity when CMD started, as Unix epoch
                                        milliseconds (wall clock, rounded down)
            The lease is extended in the background while CMD runs. If the lease is lost or cannot
            be extended in time, CMD and its descendants get SIGTERM, then SIGKILL after
            --kill-grace, always before the lock's validity ends; the exit code is then 69.
            Otherwise the exit code is CMD's own (128+N if a signal N ended it).

            Options:
              --key KEY          the lock's key (1 to 512 UTF-8 bytes)
              --wait DUR         how long to wait for the key, 0 to 3600s, to the millisecond (250ms)
                                 (default 30s; 0 = one attempt)
              --lease DUR        lease, 1s to 255s, whole seconds (default 30s)
              --kill-grace DUR   time between SIGTERM and SIGKILL (default 5s); at most 2/3 of the
                                 lease minus a safety of lease/10 (200ms to 1s)
              --shared           take a shared grant instead of the exclusive lock: a read lock
                                 (many holders; the exclusive lock is its write lock), or with
                                 --limit N one of N semaphore permits (docs/shared.md)
              --limit N          with --shared: the permits, 1 to 65535 (default 0 = read lock);
                                 every user of the key must pass the same (else exit 74)
              --value TEXT       the exclusive grant's value, up to 1024 UTF-8 bytes, shown to
                                 observers beside the token (a 1.4 server; not with --shared)

            """ + GLOBAL + DURATIONS + "\n" + EXIT_CODES;

    static final String ELECT = """
            usage: leasehold elect --key KEY [--identity ID] [--lease 15s] [--kill-grace 5s] [--wait DUR]
                                   [--json] -- CMD [ARGS...]

            Campaigns to lead KEY (a leader election, docs/election.md): waits in the key's queue as
            long as it takes (or --wait), then runs CMD while leading, and resigns when CMD exits,
            handing KEY to the next candidate at once. CMD gets
              LEASEHOLD_TERM       the term: the grant's fencing token, higher than every earlier
                                   term; pass it to the resource you guard (also as LEASEHOLD_TOKEN)
              LEASEHOLD_KEY        the key
              LEASEHOLD_IDENTITY   this candidate's identity
            The term is kept alive in the background. If it is lost or cannot be extended in time,
            CMD and its descendants get SIGTERM, then SIGKILL after --kill-grace, always before the
            term's validity ends; the exit code is then 69. Otherwise the exit code is CMD's own.
            SIGINT or SIGTERM stops CMD the same way and resigns, or withdraws from the queue if not
            leading (exit 130, 143). One term per run: to campaign again, run it again.
            To see who leads without campaigning: leasehold observe KEY (the held token is the term,
            the value the leader's identity).

            Options:
              --key KEY          the election's key (1 to 512 UTF-8 bytes)
              --identity ID      this candidate's identity, the grant's value that observers see
                                 (up to 1024 UTF-8 bytes; default HOSTNAME:PID of the command line)
              --lease DUR        each term's lease, 1s to 255s, whole seconds (default 15s): a
                                 crashed leader is replaced at most this long after its last extend
              --kill-grace DUR   time between SIGTERM and SIGKILL (default 5s); at most 2/3 of the
                                 lease minus twice a safety of lease/10 (200ms to 1s)
              --wait DUR         give up (exit 65, withdrawn) if not elected within DUR, more than 0,
                                 at most 3600s (default: no limit)
              --json             one JSON object per line on stdout (CMD's stdout is its own):
                                 {"outcome":"elected","key":..,"identity":..,"term":..,
                                 "valid_until_ms":..,"lease_s":..} when the term starts, then
                                 {"outcome":"resigned",..,"term":..,"exit_code":..}, or the failure's
                                 outcome (lock_lost, timed_out, unavailable, cannot_start)

            Needs a revision 1.4 server (values and observations).

            """ + GLOBAL + DURATIONS + "\n" + EXIT_CODES;

    static final String ACQUIRE = """
            usage: leasehold acquire --key KEY [--shared [--limit N] | --value TEXT] [--wait 30s] [--lease 30s]
                                [--json]

            Acquires KEY and prints its fencing token and validity. The lock stays held after this
            command exits, until 'leasehold release' or the end of the lease.

            Options:
              --key KEY          the lock's key (1 to 512 UTF-8 bytes)
              --wait DUR         how long to wait for the key, 0 to 3600s, to the millisecond (250ms)
                                 (default 30s; 0 = one attempt)
              --lease DUR        lease, 1s to 255s, whole seconds (default 30s)
              --shared           take a shared grant instead of the exclusive lock: a read lock
                                 (many holders; the exclusive lock is its write lock), or with
                                 --limit N one of N semaphore permits (docs/shared.md)
              --limit N          with --shared: the permits, 1 to 65535 (default 0 = read lock);
                                 every user of the key must pass the same (else exit 74)
              --value TEXT       the exclusive grant's value, up to 1024 UTF-8 bytes, shown to
                                 observers beside the token (a 1.4 server; not with --shared)
              --json             print {"outcome":"acquired","key":..,"token":..,"valid_until_ms":..,
                                 "lease_s":..} (or the failure's outcome) on stdout

            """ + GLOBAL + DURATIONS + "\n" + EXIT_CODES;

    static final String RELEASE = """
            usage: leasehold release --key KEY --token TOKEN [--json]

            Releases TOKEN of KEY. Exit code 0 if released, 70 if the token is not the key's active
            grant (its lease ended, or it was already released).

            Options:
              --key KEY          the lock's key
              --token TOKEN      the fencing token from acquire
              --json             print {"outcome":"released"|"not_held"|...,"key":..,"token":..}

            """ + GLOBAL + DURATIONS + "\n" + EXIT_CODES;

    static final String EXTEND = """
            usage: leasehold extend --key KEY --token TOKEN [--lease 30s] [--json]

            Extends TOKEN of KEY so that its lease runs at least --lease from now, and prints the
            new validity. Exit code 0 if extended, 70 if the token is not the key's active grant.

            Options:
              --key KEY          the lock's key
              --token TOKEN      the fencing token from acquire
              --lease DUR        new lease from now, 1s to 255s, whole seconds (default 30s)
              --json             print {"outcome":"extended","key":..,"token":..,"valid_until_ms":..,
                                 "lease_s":..} (or the failure's outcome)

            """ + GLOBAL + DURATIONS + "\n" + EXIT_CODES;

    static final String PING = """
            usage: leasehold ping [--json]

            Sends a Ping and prints the round trip. Exit code 0 if answered, 68 if not.

            Options:
              --json             print {"outcome":"pong","server":..,"rtt_ms":..}

            """ + GLOBAL + DURATIONS + "\n" + EXIT_CODES;

    static final String CHECK = """
            usage: leasehold check KEY TOKEN [--json]      (or --key KEY --token TOKEN)

            Asks the server whether TOKEN is still the active grant of KEY (the Check request,
            PROTOCOL.md section 11). Changes nothing. Exit code 0 if current, 70 if not current,
            67 if no answer came within --timeout (treat it as not current), 68 if unreachable.

            Options:
              --json             print {"outcome":"current"|"not_current"|...,"key":..,"token":..}

            """ + GLOBAL + DURATIONS + "\n" + EXIT_CODES;

    private static final String HTTP = """
              --http URL         the server's management port (Actuator), default http://HOST:7421
                                 with HOST from --server; a default server answers callers on
                                 its own host (docs/operations.md)
            """;

    static final String INSPECT = """
            usage: leasehold inspect KEY [--http URL] [--json]      (or --key KEY)

            Shows one key as the server sees it now: free, held, queued or delayed; the token,
            how long ago it was granted, the lease left and the longest lease requested; the
            holder's session (address, client certificate); the waiters and the oldest ones'
            waits left. Read-only. In a cluster ask the leader: another node names it (exit 68).

            Options:
            """ + HTTP + """
              --json             print the endpoint's JSON as it came

            """ + GLOBAL + DURATIONS + "\n" + EXIT_CODES;

    static final String TOP = """
            usage: leasehold top [--n 10] [--http URL] [--json]

            Shows the N keys with the longest queues and the N keys held longest (N 1 to 100).
            Read-only; the server walks all its keys on a thread of its own, a few hundred ms
            for a million held keys.

            Options:
              --n N              how many of each (default 10)
            """ + HTTP + """
              --json             print the endpoint's JSON as it came

            """ + GLOBAL + DURATIONS + "\n" + EXIT_CODES;

    static final String OBSERVE = """
            usage: leasehold observe KEY [--once] [--json]      (or --key KEY)

            Prints KEY's state now, then each change, one line each, until interrupted: free,
            held (token, value), lock delay, shared (count, limit) or recovery grace, and what
            caused it; "coalesced" when changes in between were not reported. While the state
            cannot be known (the session broke, the leader changed) it prints "unknown" and
            subscribes again by itself. An event is not a grant: only a held lock's token fences.
            Needs a revision 1.4 server (PROTOCOL.md 9.15).

            Options:
              --once             print the first event and exit (68 if none within --timeout)
              --json             one JSON object per line: {"outcome":"event","key":..,"state":..,
                                 "cause":..,"coalesced":..,"token":..,"count":..,"limit":..,
                                 "value":..} or {"outcome":"unknown","key":..,"reason":..}

            """ + GLOBAL + DURATIONS + "\n" + EXIT_CODES;

    static final String CLUSTER = """
            usage: leasehold cluster members
                   leasehold cluster add ID --raft-address HOST:PORT --client-address HOST:PORT
                   leasehold cluster remove ID
                   leasehold cluster replace OLD_ID NEW_ID --raft-address HOST:PORT --client-address HOST:PORT

            Lists or changes the members of a running cluster, one change at a time, through the
            management port of the node it runs on (it answers only from loopback: run it inside
            a member's pod, kubectl exec leasehold-0 -- bin/leasehold cluster members).
              members  every member: role (LEADER, VOTER, LISTENER), addresses, commit index, last contact
              add      ID runs with leasehold.cluster.join=true on an empty data directory; it is
                       probed, added as a non-voting listener, caught up, then made a voter
              remove   a leader hands leadership over first; the id can never rejoin
              replace  remove OLD_ID (a lost disk), then add NEW_ID (a new id, never the old one)
            A change that would leave fewer voters than a majority is refused (exit 72).

            Options:
              --raft-address HOST:PORT    the new node's Raft port (add, replace)
              --client-address HOST:PORT  the new node's lock protocol port, named in X 8 hints
              --identity SAN     with cluster TLS: dns:NAME, ip:ADDRESS or uri:URI that names the
                                 new node in its certificate (default: its Raft address's host)
              --http URL         the node's management port, default http://127.0.0.1:7421; the
                                 cluster endpoint must be exposed (the Helm chart does)
              --timeout DUR      how long to wait for the answer (default 2m)
              --json             print the endpoint's JSON as it came

            """ + EXIT_CODES;

    static final String ADMIN = """
            usage: leasehold admin snapshot save FILE
                   leasehold admin snapshot verify FILE

            save    asks the node's management port for a token-floor snapshot (the highest token
                    issued or reserved, the roster, when, which node, term and index), checks its
                    sha256 and writes it to FILE (fsync'd, then moved over FILE; - = stdout). In a
                    cluster run it on the leader (another member answers which node leads: exit 68).
            verify  checks FILE (format version and sha256) and prints what it holds.
            Restore: start a node (each founder of a new cluster) on an EMPTY data directory with
            leasehold.restore-from=FILE; its tokens start above the floor plus token-block-size.

            Options:
              --http URL         the node's management port, default http://127.0.0.1:7421; the
                                 snapshot endpoint must be exposed (the Helm chart does)
              --timeout DUR      how long to wait for the answer (default 5s)
              --json             one JSON object on stdout

            """ + EXIT_CODES;

    private Help() {
    }

    static String of(String command) {
        if (command == null) {
            return MAIN;
        }
        switch (command) {
            case "run":
                return RUN;
            case "elect":
                return ELECT;
            case "acquire":
                return ACQUIRE;
            case "release":
                return RELEASE;
            case "extend":
                return EXTEND;
            case "check":
                return CHECK;
            case "inspect":
                return INSPECT;
            case "top":
                return TOP;
            case "observe":
                return OBSERVE;
            case "cluster":
                return CLUSTER;
            case "admin":
                return ADMIN;
            default:
                return PING;
        }
    }
}
