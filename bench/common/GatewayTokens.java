import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;

/**
 * Bearer tokens as payonce's gateway mints them (RS256, issuer payonce-gateway, audience payonce), signed with the
 * test key under src/test: for the load programs in bench/, which run on loopback only.
 */
public final class GatewayTokens {

    private final PrivateKey key;

    public GatewayTokens(Path privateKeyPem) throws Exception {
        String base64 = Files.readString(privateKeyPem).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        this.key = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(base64)));
    }

    public String mint(String subject, String group) throws Exception {
        long now = System.currentTimeMillis() / 1000;
        String header = base64("{\"alg\":\"RS256\",\"typ\":\"JWT\"}");
        String claims = base64("{\"iss\":\"payonce-gateway\",\"aud\":\"payonce\",\"sub\":\"" + subject + "\",\"groups\":[\"" + group
                + "\"],\"iat\":" + now + ",\"exp\":" + (now + 3_600) + "}");
        Signature rsa = Signature.getInstance("SHA256withRSA");
        rsa.initSign(key);
        rsa.update((header + "." + claims).getBytes(StandardCharsets.US_ASCII));
        return header + "." + claims + "." + Base64.getUrlEncoder().withoutPadding().encodeToString(rsa.sign());
    }

    private static String base64(String json) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }
}
