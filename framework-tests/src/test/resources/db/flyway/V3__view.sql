CREATE VIEW customer_domain AS SELECT split_part(email, '@', 2) AS domain, count(*) AS customers FROM customer GROUP BY 1;
INSERT INTO flyway_audit
  SELECT '3', pg_is_in_recovery(), inet_server_port(), current_setting('application_name'), pg_backend_pid(),
         (SELECT string_agg(DISTINCT a.application_name, ',') FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted);
