package dev.leasehold.cluster.tls;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * A key manager whose key and certificate can be replaced while handshakes run: Ratis builds its
 * TLS contexts once, and Netty asks the key manager on every handshake, so swapping the delegate
 * is how new Raft connections get a rotated certificate (open ones keep theirs).
 *
 * <p>Aliases carry the generation they were chosen from ({@code "3/ssl"}): the JDK asks for the
 * alias, then the chain, then the key in separate calls, and a rotation between them must not
 * pair the new certificate with the old key. The previous generation stays answerable for
 * handshakes that chose it just before a swap. Thread-safe.
 */
final class ReloadingKeyManager extends X509ExtendedKeyManager {

    private final AtomicInteger generation = new AtomicInteger();
    private final ConcurrentMap<Integer, X509ExtendedKeyManager> byGeneration = new ConcurrentHashMap<>();

    /** @param initial the key material to present until the first {@link #update} */
    public ReloadingKeyManager(X509ExtendedKeyManager initial) {
        byGeneration.put(0, initial);
    }

    /** New handshakes present {@code next} from now on. */
    public synchronized void update(X509ExtendedKeyManager next) {
        int g = generation.get() + 1;
        byGeneration.put(g, next); // before the generation moves: current() always finds its delegate
        generation.set(g);
        byGeneration.keySet().removeIf(k -> k < g - 1);
    }

    private X509ExtendedKeyManager current(int[] g) {
        int now = generation.get();
        g[0] = now;
        return byGeneration.get(now);
    }

    private static String tag(int g, String alias) {
        return alias == null ? null : g + "/" + alias;
    }

    private static String[] tag(int g, String[] aliases) {
        if (aliases == null) {
            return null;
        }
        String[] out = new String[aliases.length];
        for (int i = 0; i < aliases.length; i++) {
            out[i] = tag(g, aliases[i]);
        }
        return out;
    }

    /** The delegate an alias was chosen from, or null if that generation is gone. */
    private X509ExtendedKeyManager owner(String tagged) {
        int slash = tagged == null ? -1 : tagged.indexOf('/');
        if (slash < 0) {
            return null;
        }
        try {
            return byGeneration.get(Integer.parseInt(tagged.substring(0, slash)));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
        int[] g = new int[1];
        return tag(g[0], current(g).getClientAliases(keyType, issuers));
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
        int[] g = new int[1];
        X509ExtendedKeyManager km = current(g);
        return tag(g[0], km.chooseClientAlias(keyType, issuers, socket));
    }

    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
        int[] g = new int[1];
        X509ExtendedKeyManager km = current(g);
        return tag(g[0], km.chooseEngineClientAlias(keyType, issuers, engine));
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
        int[] g = new int[1];
        return tag(g[0], current(g).getServerAliases(keyType, issuers));
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
        int[] g = new int[1];
        X509ExtendedKeyManager km = current(g);
        return tag(g[0], km.chooseServerAlias(keyType, issuers, socket));
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
        int[] g = new int[1];
        X509ExtendedKeyManager km = current(g);
        return tag(g[0], km.chooseEngineServerAlias(keyType, issuers, engine));
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
        X509ExtendedKeyManager km = owner(alias);
        return km == null ? null : km.getCertificateChain(alias.substring(alias.indexOf('/') + 1));
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
        X509ExtendedKeyManager km = owner(alias);
        return km == null ? null : km.getPrivateKey(alias.substring(alias.indexOf('/') + 1));
    }
}
