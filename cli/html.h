/*
 * The picture of a reproduced bug: one self-contained HTML page (inline
 * CSS, no script, no network) with the threads as lanes on a time axis,
 * the schedule's context switches, the predicted events and the failure
 * highlighted, the backtrace and the replay and verify commands.  Written
 * by 'avtrace report --html' and beside every report 'avtrace test'
 * writes.  Data: the files of the output directory, read through struct
 * results (cli/results.h), and the minimal schedule of a bug when one was
 * written (reports/X.min.sched, reports/X.min.json).  The page's element
 * ids and classes are documented in docs/html-report.md.
 */
#ifndef AVT_CLI_HTML_H
#define AVT_CLI_HTML_H

#include <stddef.h>

#include "results.h"

/* The name X of a bug's report (reports/X.txt): "0001" for prediction 1,
 * "explore-0003" for exploration run 3. */
void html_bug_name(const struct result_bug *b, char *buf, size_t len);

/* Writes the page of bug b of r to path ("-": stdout); -1 after an
 * avt_error(). */
int html_write(struct results *r, const struct result_bug *b, const char *path);

/* Writes reports/X.html beside every reports/X.txt of DIR's distinct bugs;
 * the number of pages written, -1 if DIR cannot be read.  A page that
 * cannot be written is warned about and skipped. */
int html_write_beside_reports(const char *dir);

#endif
