/* options.h - options declared once, as rows of a table.
 *
 * Every option of a command is one row: its name (the long flag, and the key
 * of a JSON config file), its type, the field it sets, its bounds, its
 * default and its help.  The same rows drive flag parsing, JSON config
 * parsing, --help, and the configuration echoed into summary.json, so none of
 * these can disagree with another.  Defaults live in the rows only.
 */
#ifndef SPARSIM_OPTIONS_H
#define SPARSIM_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
    SP_OT_INT,    /* int field */
    SP_OT_U64,    /* uint64_t field */
    SP_OT_DOUBLE, /* double field, finite */
    SP_OT_STRING, /* char array of `size` bytes */
    SP_OT_CHOICE, /* one of `choices`: an int field (the choice's value), or a char array (its name) */
    SP_OT_BOOL    /* int field, 0 or 1: --NAME sets it, --no-NAME clears it, JSON true/false */
} sp_opt_type;

typedef struct {
    const char *name;
    int value;
} sp_opt_choice;

enum {
    SP_OPT_SUFFIX = 1 << 0,   /* integers take K, M, G suffixes (powers of 1024) */
    SP_OPT_OPEN_MIN = 1 << 1, /* the minimum itself is not allowed */
    SP_OPT_NO_ECHO = 1 << 2,  /* not part of the configuration echoed into summary.json */
    SP_OPT_CLI_ONLY = 1 << 3, /* a flag only, not a config file key (--config itself) */
    SP_OPT_LIST = 1 << 4,     /* a comma list (or a JSON array): the command runs each value */
    SP_OPT_EVERYDAY = 1 << 5, /* shown by the short --help of a table with groups */
};

typedef struct {
    const char *name;       /* long flag without "--", and JSON key */
    sp_opt_type type;
    size_t offset, size;    /* the field in the target struct */
    double min, max;        /* bounds of numbers (inclusive unless SP_OPT_OPEN_MIN) */
    const char *dflt;       /* the default as text, parsed like a flag value; NULL: zero */
    const sp_opt_choice *choices; /* SP_OT_CHOICE: ends with a NULL name */
    unsigned flags;
    const char *metavar;    /* the value's name in --help */
    const char *range;      /* the allowed values, as messages say them; NULL: from the bounds */
    const char *help;       /* what it does ('\n' breaks a line) */
    const char *(*help_of)(void); /* instead of help: the text written from a table (the algorithms, the platforms) */
    const char *dflt_help;  /* the default as --help says it, when not dflt */
    const char *group;      /* tables with groups: the key of the row's group */
    const char *brief;      /* SP_OPT_EVERYDAY rows: the short --help's one line (NULL: the help) */
    const char *(*brief_of)(void); /* instead of brief, likewise */
} sp_opt;

/* A group of a table's options: --help=KEY shows it.  A table with groups
 * prints its rows group by group, in the groups' order, each group's rows in
 * the table's order (which is also the order of the echo). */
typedef struct {
    const char *key;   /* --help=KEY */
    const char *title; /* its heading */
} sp_opt_group;

typedef struct {
    const sp_opt *rows;
    int count;
    const sp_opt_group *groups; /* NULL: no groups; --help prints every row in order */
    int ngroups;
} sp_opt_table;

#define SP_OPT_TABLE(r) ((sp_opt_table){.rows = (r), .count = (int)(sizeof(r) / sizeof((r)[0]))})
#define SP_OPT_TABLE_GROUPED(r, g)                                                                                  \
    ((sp_opt_table){.rows = (r),                                                                                   \
                    .count = (int)(sizeof(r) / sizeof((r)[0])),                                                    \
                    .groups = (g),                                                                                 \
                    .ngroups = (int)(sizeof(g) / sizeof((g)[0]))})

/* Every field of `target` set to its row's default. */
void sp_opts_defaults(const sp_opt_table *t, void *target);

/* The row named `name`, its index, or NULL / -1. */
const sp_opt *sp_opts_find(const sp_opt_table *t, const char *name);
int sp_opts_index(const sp_opt_table *t, const char *name);

/* Sets option `name` from its text.  Returns 0, -1 with a one-line message
 * naming the option and its allowed values, or 1 if the table has no such
 * option (nothing written).  `given` (t->count flags, may be NULL) records
 * what was set explicitly. */
int sp_opts_set(const sp_opt_table *t, void *target, unsigned char *given, const char *name, const char *value,
                char *err, size_t errlen);

/* Parses flags (--name value, --name=value, --flag, --no-flag).  Arguments
 * the table does not know go to rest[] (when rest is not NULL; it must have
 * room for argc entries), with their value when they have one in the form
 * --name=value; otherwise they are an error.  Returns 0 or -1 with a message. */
int sp_opts_parse_argv(const sp_opt_table *t, void *target, unsigned char *given, int argc, char **argv,
                       char **rest, int *nrest, char *err, size_t errlen);

/* Applies a JSON object's keys.  Keys the table does not know are an error,
 * or, with `known_only`, left in the object for another table; known keys
 * are removed from it.  JSON arrays are accepted for SP_OPT_LIST rows. */
struct cJSON;
int sp_opts_apply_json(const sp_opt_table *t, void *target, unsigned char *given, struct cJSON *obj, int known_only,
                       const char *origin, char *err, size_t errlen);

/* The value of a row as text (a choice by its name). */
void sp_opts_format(const sp_opt *o, const void *target, char *buf, size_t n);

/* The rows as --help lines: every row (group by group where the table has
 * groups). */
void sp_opts_help(const sp_opt_table *t, FILE *f);

/* --help of a table with groups: the SP_OPT_EVERYDAY rows, in table order,
 * each with its brief line. */
void sp_opts_help_everyday(const sp_opt_table *t, FILE *f);

/* One line per group: how to see it (--help=KEY), its heading and how many
 * options it holds. */
void sp_opts_help_groups(const sp_opt_table *t, FILE *f);

/* --help=KEY: the group's heading and rows (f NULL: only whether it is
 * one); -1 if the table has no group KEY (nothing printed). */
int sp_opts_help_group(const sp_opt_table *t, const char *key, FILE *f);

/* The rows as a Markdown reference: per group a heading at `level` ("##")
 * and its --help=KEY, then a table of the flag with its value, the default,
 * the allowed values and the help (a table without groups: the one table). */
void sp_opts_markdown(const sp_opt_table *t, const char *level, FILE *f);

/* What follows "--help" among the arguments: "" for --help or -h, the text
 * after "--help=" for --help=X, NULL when none asks for help. */
const char *sp_opts_help_arg(int argc, char **argv);

/* The configuration as a JSON object: every row without SP_OPT_NO_ECHO,
 * numbers as numbers, choices by name, flags as booleans. */
struct cJSON *sp_opts_echo(const sp_opt_table *t, const void *target);

/* A JSON config file read whole: the object, or NULL with a message. */
struct cJSON *sp_opts_read_config(const char *path, char *err, size_t errlen);

/* Copies `text` into `out` (n bytes) with control characters escaped
 * (\xNN), so that a value echoed in a message stays on one line. */
const char *sp_opts_printable(const char *text, char *out, size_t n);

/* Prints "sparsim: MSG" on stderr as exactly one line: control characters
 * in msg (a newline from a library's message, a value echoed as given)
 * escaped as sp_opts_printable does. */
void sp_opts_print_error(const char *msg);

/* Whether an output can be written at `path` before anything runs: a folder
 * (folder = 1: it exists, or the nearest folder above it that exists can
 * take new folders) or a file (its folder exists and takes new files; the
 * path itself is not a folder).  The check creates and removes a probe file.
 * 0, or -1 with a one-line message that starts with `what` (the flag). */
int sp_opts_output_ok(const char *path, int folder, const char *what, char *err, size_t errlen);

#endif
