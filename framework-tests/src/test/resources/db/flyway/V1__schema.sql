-- Every migration records where it ran and whether a session of this application holds an
-- advisory lock on this server at that moment (Flyway's migration lock).
CREATE TABLE flyway_audit (
  version text PRIMARY KEY,
  in_recovery boolean NOT NULL,
  port int NOT NULL,
  app text NOT NULL,
  pid int NOT NULL,
  lock_holders text
);
INSERT INTO flyway_audit
  SELECT '1', pg_is_in_recovery(), inet_server_port(), current_setting('application_name'), pg_backend_pid(),
         (SELECT string_agg(DISTINCT a.application_name, ',') FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted);

CREATE TABLE customer (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, email text NOT NULL UNIQUE);
