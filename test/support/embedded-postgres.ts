// The throwaway PostgreSQL server of the tests lives in bench/support/embedded-postgres.ts (bench/ never
// imports test/, so the benchmarks' and the tests' starter is kept there); tests take it from here. The
// default server is the fast one (fsync and synchronous_commit off).
export { type EmbeddedPostgresOptions, type PostgresServer, startEmbeddedPostgres } from '../../bench/support/embedded-postgres.ts';
