package planner.testauth;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import javax.security.sasl.AuthenticationException;

import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;
import org.apache.hive.service.auth.PasswdAuthenticationProvider;

/**
 * HiveServer2 CUSTOM authentication for tests: users and passwords come from a file of
 * "user:password" lines. The file is named by the HiveConf key planner.testauth.file (set with
 * --hiveconf, hive-site.xml) or the Java system property of the same name.
 * Hive builds this class with ReflectionUtils.newInstance(cls, new HiveConf()), so setConf is
 * called with a fresh HiveConf (hive-site.xml + system properties, which --hiveconf sets).
 */
public class FileAuthProvider implements PasswdAuthenticationProvider, Configurable {
    public static final String KEY = "planner.testauth.file";
    private Configuration conf;

    @Override public void setConf(Configuration c) { this.conf = c; }
    @Override public Configuration getConf() { return conf; }

    private String file() {
        String f = conf == null ? null : conf.get(KEY);
        if (f == null || f.isEmpty()) f = System.getProperty(KEY);
        return f;
    }

    @Override
    public void Authenticate(String user, String password) throws AuthenticationException {
        String f = file();
        if (f == null) throw new AuthenticationException("planner.testauth: no " + KEY + " set");
        List<String> lines;
        try {
            lines = Files.readAllLines(Paths.get(f), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AuthenticationException("planner.testauth: cannot read " + f, e);
        }
        for (String line : lines) {
            int i = line.indexOf(':');
            if (i > 0 && line.substring(0, i).equals(user) && line.substring(i + 1).equals(password)) {
                return;
            }
        }
        throw new AuthenticationException("Error validating the login: bad user or password for " + user);
    }
}
