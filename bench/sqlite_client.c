/*
 * A 4-thread SQLite client (bench/sqlite): THREADS threads share one
 * connection opened in serialized mode (SQLITE_OPEN_FULLMUTEX: every call
 * takes the connection's mutex, a pthread mutex inside libsqlite3) to an
 * in-memory database, and each runs OPS rounds of an INSERT and a SELECT
 * by key through its own prepared statements.  No sleep, no file lock: the
 * time is SQLite's and its locks'.
 *
 * Usage: sqlite_client [OPS=20000] [THREADS=4]
 * Prints "rows=N"; exits 0 iff every insert and lookup succeeded.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static sqlite3 *db;
static long ops = 20000;

static void *client(void *arg)
{
	long id = (long)arg, bad = 0;
	sqlite3_stmt *ins, *sel;
	if (sqlite3_prepare_v2(db, "INSERT INTO kv(k, v) VALUES (?1, ?2)", -1, &ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT v FROM kv WHERE k = ?1", -1, &sel, NULL) != SQLITE_OK)
		return (void *)1;
	for (long i = 0; i < ops; i++) {
		long k = id * ops + i;
		sqlite3_bind_int64(ins, 1, k);
		sqlite3_bind_int64(ins, 2, k * 7);
		bad += sqlite3_step(ins) != SQLITE_DONE;
		sqlite3_reset(ins);
		sqlite3_bind_int64(sel, 1, k);
		bad += sqlite3_step(sel) != SQLITE_ROW || sqlite3_column_int64(sel, 0) != k * 7;
		sqlite3_reset(sel);
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(sel);
	return (void *)bad;
}

int main(int argc, char **argv)
{
	int n = 4;
	if (argc > 1)
		ops = atol(argv[1]);
	if (argc > 2)
		n = atoi(argv[2]);
	if (ops < 1 || n < 1 || n > 64)
		return 2;
	if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK ||
	    sqlite3_exec(db, "CREATE TABLE kv(k INTEGER PRIMARY KEY, v INTEGER)", NULL, NULL, NULL) != SQLITE_OK)
		return 1;
	pthread_t t[64];
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, client, (void *)i);
	long bad = 0;
	for (int i = 0; i < n; i++) {
		void *r;
		pthread_join(t[i], &r);
		bad += (long)r;
	}
	sqlite3_stmt *cnt;
	long rows = -1;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM kv", -1, &cnt, NULL) == SQLITE_OK &&
	    sqlite3_step(cnt) == SQLITE_ROW)
		rows = sqlite3_column_int64(cnt, 0);
	sqlite3_finalize(cnt);
	sqlite3_close(db);
	printf("rows=%ld\n", rows);
	return bad || rows != ops * n;
}
