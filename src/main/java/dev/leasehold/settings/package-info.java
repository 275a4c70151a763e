/**
 * What every part of the server says when a {@code leasehold.*} setting cannot be used:
 * {@link dev.leasehold.settings.SettingException}. It sits in a package of its own, depending on
 * the JDK only, because the settings are checked at every layer (the properties when they bind,
 * the protocol port when it binds, the cluster's TLS when it reads its certificate), and
 * {@code config}, which reports the failure, may be known by none of them.
 */
package dev.leasehold.settings;
