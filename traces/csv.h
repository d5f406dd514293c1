/* csv.h - CSV as RFC 4180 has it: the one reader and the one quoter that
 * every CSV sparsim writes and reads back goes through (the sweep CSV and its
 * readers, comparison.csv's echoed names, analyze --format csv).
 *
 * Fields are separated by commas and records by newlines (a CR before the
 * newline is dropped); a field in double quotes may hold commas, newlines and
 * doubled quotes.  A record keeps where its text starts and ends, so that a
 * reader can copy rows as they are, and whether a newline ended it (the last
 * record of a file cut short is not complete). */
#ifndef SPARSIM_CSV_H
#define SPARSIM_CSV_H

#include <stddef.h>

typedef struct {
    char **f; /* the fields, unquoted */
    int n;
    const char *start, *end; /* the record's text, its newline excluded */
    int complete;            /* ended by a newline (the last one of a cut file is not) */
} sp_csv_rec;

/* The record at *pos (advanced past it): 1, 0 at the end of the text, -1
 * when memory runs out or a quote is never closed (then *pos is the end).
 * The caller frees a record read (1) with sp_csv_free. */
int sp_csv_next(const char **pos, const char *end, sp_csv_rec *r);
void sp_csv_free(sp_csv_rec *r);

/* The place of field `name` in a header record, or -1. */
int sp_csv_column(const sp_csv_rec *header, const char *name);

/* `text` as one CSV field: quoted, with quotes doubled, when it holds a
 * comma, a quote or a line break; as it is otherwise.  Into `out` (n bytes;
 * a longer field is cut, its closing quote kept); returns out. */
const char *sp_csv_field(const char *text, char *out, size_t n);

/* A record being written: fields joined by commas in a buffer that grows.
 * After running out of memory every call does nothing and oom is set. */
typedef struct {
    char *text; /* NUL-terminated; NULL before the first field */
    size_t len, cap;
    int fields, oom;
} sp_csv_row;

/* appends `text`, quoted where it must be */
void sp_csv_row_text(sp_csv_row *r, const char *text);
/* appends a number as printf's `fmt` (one double conversion) writes it */
void sp_csv_row_num(sp_csv_row *r, const char *fmt, double v);
/* appends an empty field */
void sp_csv_row_empty(sp_csv_row *r);
/* ends the record with its newline (the next field starts another) */
void sp_csv_row_end(sp_csv_row *r);
void sp_csv_row_free(sp_csv_row *r);

#endif
