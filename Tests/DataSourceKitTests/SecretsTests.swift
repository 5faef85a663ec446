import DataSourceKit
import DataSourceKitValues
import Testing

@Suite("Passwords left out of what describes a source")
struct SecretsTests {
  @Test(
    "a URL's password and a key=value password word are left out; the rest still connects",
    arguments: [
      (
        #"postgres "postgresql://reader:s3cr%40t@db.example:5432/shop" table people"#,
        #"postgres "postgresql://reader@db.example:5432/shop" table people"#
      ),
      (
        #"postgres "postgres://u:p@h/db?sslmode=require&password=x" query "SELECT 1""#,
        #"postgres "postgres://u@h/db?sslmode=require" query "SELECT 1""#
      ),
      (
        #"postgres "postgresql://u@h/db?password=x&sslmode=require""#,
        #"postgres "postgresql://u@h/db?sslmode=require""#
      ),
      (
        #"postgres "host=h user=u password=secret dbname=d" table t"#,
        #"postgres "host=h user=u dbname=d" table t"#
      ),
      (#"postgres "password='a b\' c' host=h" table t"#, #"postgres "host=h" table t"#),
      (
        #"postgres "host=h sslpassword=k sslmode=verify-full" table t"#,
        #"postgres "host=h sslmode=verify-full" table t"#
      ),
      (#"http "https://user:token@api.example/items""#, #"http "https://user@api.example/items""#),
      (#"postgres "host=h PassWord=secret dbname=d""#, #"postgres "host=h dbname=d""#),
    ])
  func redacted(text: String, expected: String) {
    #expect(Secrets.redacted(text) == expected)
  }

  @Test(
    "SQL, paths and plain text are left as they are, a column called password included",
    arguments: [
      #"sqlite "users.db" query "SELECT name FROM users WHERE password = 'x'""#,
      #"postgres "host=h dbname=d" query "SELECT password FROM accounts""#,
      #"csv "data/password=1.csv""#,
      "show t | where password == \"x\"",
      "postgresql://reader@db/shop",
    ])
  func unchanged(text: String) {
    #expect(Secrets.redacted(text) == text)
  }
}
