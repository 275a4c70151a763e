package dev.leasehold.server;

/**
 * Transport security of the protocol port.
 *
 * @param tls TLS for every session, or {@code null} for plaintext TCP
 * @param acl which keys each client identity may use, or {@code null} to let every client use
 *        every key; needs {@code tls} with client certificates to mean anything, since without a
 *        certificate a client has no identity and may use no key
 */
public record ServerSecurity(ServerTls tls, KeyAcl acl) {

    /** Plaintext, no ACL. */
    public static final ServerSecurity NONE = new ServerSecurity(null, null);
}
