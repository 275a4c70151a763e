package dev.leasehold.client.cli;

import java.util.Map;

/** Writes the flat JSON objects of {@code --json}: one object per line. */
final class Json {

    /** A number written as is, e.g. an unsigned 64-bit token. */
    record Raw(String text) {
    }

    private Json() {
    }

    /** The object's fields in map order; values are String, Number, Boolean, Raw or null. */
    static String object(Map<String, ?> fields) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, ?> e : fields.entrySet()) {
            if (b.length() > 1) {
                b.append(',');
            }
            string(b, e.getKey());
            b.append(':');
            Object v = e.getValue();
            if (v == null) {
                b.append("null");
            } else if (v instanceof Raw r) {
                b.append(r.text());
            } else if (v instanceof Number || v instanceof Boolean) {
                b.append(v);
            } else {
                string(b, v.toString());
            }
        }
        return b.append('}').toString();
    }

    private static void string(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    b.append("\\\"");
                    break;
                case '\\':
                    b.append("\\\\");
                    break;
                case '\n':
                    b.append("\\n");
                    break;
                case '\r':
                    b.append("\\r");
                    break;
                case '\t':
                    b.append("\\t");
                    break;
                default:
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        b.append('"');
    }
}
