-- Run by Spring Boot's Flyway auto-configuration through the application's jdbc:omnium: DataSource.
CREATE TABLE migration_audit (version text PRIMARY KEY, in_recovery boolean, port int, app text, pid int);
INSERT INTO migration_audit
  SELECT '1', pg_is_in_recovery(), inet_server_port(), current_setting('application_name'), pg_backend_pid();

CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL);
INSERT INTO items SELECT g, 'item' || g FROM generate_series(1, 10) g;
