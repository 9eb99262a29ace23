INSERT INTO customer (email) SELECT 'c' || g || '@example.org' FROM generate_series(1, 20) g;
INSERT INTO flyway_audit
  SELECT '2', pg_is_in_recovery(), inet_server_port(), current_setting('application_name'), pg_backend_pid(),
         (SELECT string_agg(DISTINCT a.application_name, ',') FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted);
