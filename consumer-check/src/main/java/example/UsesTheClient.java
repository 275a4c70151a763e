package example;

import dev.leasehold.client.AcquireOutcome;
import dev.leasehold.client.LeaseholdClient;
import dev.leasehold.client.Ticket;

/** Compiles against the installed client jar alone. */
public final class UsesTheClient {

    private UsesTheClient() {
    }

    public static void main(String[] args) {
        try (LeaseholdClient client = LeaseholdClient.create(args.length > 0 ? args[0] : "127.0.0.1:7420")) {
            if (client.acquire("consumer-check", 0, 5) instanceof AcquireOutcome.Acquired a) {
                try (Ticket ticket = a.ticket()) {
                    System.out.println("token " + ticket.token());
                }
            }
        }
    }
}
