/**
 * The {@code leasehold} command line, built on the official client and, like it, JDK only: it is
 * the {@code Main-Class} of the client jar. {@link dev.leasehold.client.cli.Main} is the entry
 * point; {@code run} supervises a command under a lock, {@code elect} one while leading an
 * election, {@code acquire}, {@code release},
 * {@code extend} and {@code ping} poke a server from the shell. See docs/cli.md.
 */
package dev.leasehold.client.cli;
