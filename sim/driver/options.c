/* options.c - parsing, help and echo driven by option tables (options.h). */
#include "options.h"
#include "traces/trace.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *sp_opts_printable(const char *text, char *out, size_t n)
{
    size_t w = 0;
    for (const unsigned char *s = (const unsigned char *)text; *s && w + 5 < n; s++) {
        if (*s < 0x20 || *s == 0x7f)
            w += (size_t)snprintf(out + w, n - w, "\\x%02x", *s);
        else
            out[w++] = (char)*s;
    }
    if (n)
        out[w < n ? w : n - 1] = '\0';
    return out;
}

void sp_opts_print_error(const char *msg)
{
    size_t n = 4 * strlen(msg) + 1;
    char small[2048], *buf = n <= sizeof small ? small : malloc(n);
    if (!buf) { /* no room to escape: the message is cut at its first control character */
        fprintf(stderr, "sparsim: %.*s\n", (int)strcspn(msg, "\n\r\t\033"), msg);
        return;
    }
    fprintf(stderr, "sparsim: %s\n", sp_opts_printable(msg, buf, n));
    if (buf != small)
        free(buf);
}

/* creates and removes a file in `dir`: the one sure test that it takes new
 * files (permissions, a read-only mount, a full inode table) */
static int probe_folder(const char *dir, const char *what, const char *shown, char *err, size_t errlen)
{
    char probe[1200];
    if (snprintf(probe, sizeof probe, "%s/.sparsim-probe-XXXXXX", dir) >= (int)sizeof probe) {
        snprintf(err, errlen, "%s: the path '%s' is too long", what, shown);
        return -1;
    }
    /* a signal that ends the run between the file's creation and its
     * removal would leave it behind: they wait until it is gone */
    sigset_t stop, was;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, &was);
    int fd = mkstemp(probe), e = errno;
    if (fd >= 0) {
        close(fd);
        unlink(probe);
    }
    sigprocmask(SIG_SETMASK, &was, NULL);
    if (fd < 0) {
        char sd[400];
        snprintf(err, errlen, "%s: cannot write in folder '%s': %s", what, sp_opts_printable(dir, sd, sizeof sd),
                 strerror(e));
        return -1;
    }
    return 0;
}

int sp_opts_output_ok(const char *path, int folder, const char *what, char *err, size_t errlen)
{
    char shown[400], dir[1100];
    sp_opts_printable(path, shown, sizeof shown);
    if (!path[0]) {
        snprintf(err, errlen, "%s needs a path", what);
        return -1;
    }
    if (strlen(path) >= sizeof dir - 32) {
        snprintf(err, errlen, "%s: the path '%s' is too long", what, shown);
        return -1;
    }
    struct stat st;
    if (!folder) {
        if (path[strlen(path) - 1] == '/' || (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))) {
            snprintf(err, errlen, "%s: '%s' is a folder, not a file", what, shown);
            return -1;
        }
        const char *slash = strrchr(path, '/');
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else if (slash == path)
            snprintf(dir, sizeof dir, "/");
        else
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        int missing = stat(dir, &st) != 0;
        if (missing || !S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: the folder of '%s' %s", what, shown,
                     missing ? "does not exist" : "is not a folder");
            return -1;
        }
        return probe_folder(dir, what, shown, err, errlen);
    }
    /* a folder: the nearest part of the path that exists must be a folder */
    snprintf(dir, sizeof dir, "%s", path);
    for (;;) {
        if (stat(dir, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                char sd[400];
                snprintf(err, errlen, "%s: '%s' exists and is not a folder", what,
                         sp_opts_printable(dir, sd, sizeof sd));
                return -1;
            }
            return probe_folder(dir, what, shown, err, errlen);
        }
        if (errno != ENOENT && errno != ENOTDIR) { /* ENOTDIR: a file above it, found next */
            char sd[400];
            snprintf(err, errlen, "%s: cannot use '%s': %s", what, sp_opts_printable(dir, sd, sizeof sd),
                     strerror(errno));
            return -1;
        }
        char *slash = strrchr(dir, '/');
        while (slash && slash > dir && slash[1] == '\0') { /* trailing slashes */
            *slash = '\0';
            slash = strrchr(dir, '/');
        }
        if (!slash) {
            snprintf(dir, sizeof dir, ".");
        } else if (slash == dir) {
            snprintf(dir, sizeof dir, "/");
        } else {
            *slash = '\0';
        }
    }
}

const sp_opt *sp_opts_find(const sp_opt_table *t, const char *name)
{
    int i = sp_opts_index(t, name);
    return i < 0 ? NULL : &t->rows[i];
}

int sp_opts_index(const sp_opt_table *t, const char *name)
{
    for (int i = 0; i < t->count; i++)
        if (strcmp(t->rows[i].name, name) == 0)
            return i;
    return -1;
}

static void *field(const sp_opt *o, void *target) { return (char *)target + o->offset; }
static const void *cfield(const sp_opt *o, const void *target) { return (const char *)target + o->offset; }

/* the allowed values as a message says them */
static void range_text(const sp_opt *o, char *buf, size_t n)
{
    if (o->range) {
        snprintf(buf, n, "%s", o->range);
        return;
    }
    switch (o->type) {
    case SP_OT_INT:
    case SP_OT_U64:
        if (o->max >= 1.8e19)
            snprintf(buf, n, "an integer of at least %.0f", o->min);
        else
            snprintf(buf, n, "an integer in %.0f..%.0f", o->min, o->max);
        break;
    case SP_OT_DOUBLE:
        if (isinf(o->max))
            snprintf(buf, n, "a number %s %g", o->flags & SP_OPT_OPEN_MIN ? ">" : ">=", o->min);
        else
            snprintf(buf, n, "a number in %c%g, %g]", o->flags & SP_OPT_OPEN_MIN ? '(' : '[', o->min, o->max);
        break;
    case SP_OT_CHOICE: {
        size_t w = 0;
        int cnt = 0;
        while (o->choices[cnt].name)
            cnt++;
        for (int i = 0; i < cnt && w < n; i++)
            w += (size_t)snprintf(buf + w, n - w, "%s%s", i == 0 ? "" : i + 1 == cnt ? " or " : ", ",
                                  o->choices[i].name);
        break;
    }
    case SP_OT_BOOL:
        snprintf(buf, n, "true or false");
        break;
    case SP_OT_STRING:
        snprintf(buf, n, "a text of at most %zu characters", o->size - 1);
        break;
    }
}

static int parse_u64(const char *s, uint64_t *out, int suffix)
{
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno)
        return -1;
    uint64_t mul = 1;
    if (suffix && *end) {
        switch (*end) {
        case 'K': case 'k': mul = 1ull << 10; break;
        case 'M': case 'm': mul = 1ull << 20; break;
        case 'G': case 'g': mul = 1ull << 30; break;
        default: return -1;
        }
        end++;
    }
    if (*end || v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    if (!s || !*s || *s == ' ')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int in_bounds(const sp_opt *o, double v)
{
    if (o->flags & SP_OPT_OPEN_MIN ? !(v > o->min) : !(v >= o->min))
        return 0;
    return v <= o->max;
}

/* sets one row from text; -1 with the message */
static int set_row(const sp_opt *o, void *target, const char *v, char *err, size_t errlen)
{
    char range[256], shown[160];
    switch (o->type) {
    case SP_OT_INT: {
        uint64_t u = 0;
        int neg = v[0] == '-';
        if (parse_u64(neg ? v + 1 : v, &u, o->flags & SP_OPT_SUFFIX) != 0 || u > 0x7fffffffull ||
            !in_bounds(o, neg ? -(double)u : (double)u))
            goto bad;
        *(int *)field(o, target) = neg ? -(int)u : (int)u;
        return 0;
    }
    case SP_OT_U64: {
        uint64_t u;
        if (parse_u64(v, &u, o->flags & SP_OPT_SUFFIX) != 0 || !in_bounds(o, (double)u))
            goto bad;
        *(uint64_t *)field(o, target) = u;
        return 0;
    }
    case SP_OT_DOUBLE: {
        double d;
        if (parse_double(v, &d) != 0 || !in_bounds(o, d))
            goto bad;
        *(double *)field(o, target) = d;
        return 0;
    }
    case SP_OT_STRING:
        if (strlen(v) >= o->size) {
            snprintf(err, errlen, "value of --%s is too long (at most %zu characters)", o->name, o->size - 1);
            return -1;
        }
        memcpy(field(o, target), v, strlen(v) + 1);
        return 0;
    case SP_OT_CHOICE:
        for (const sp_opt_choice *c = o->choices; c->name; c++)
            if (strcmp(c->name, v) == 0) {
                if (o->size == sizeof(int))
                    *(int *)field(o, target) = c->value;
                else
                    snprintf(field(o, target), o->size, "%s", c->name);
                return 0;
            }
        goto bad;
    case SP_OT_BOOL:
        if (!strcmp(v, "true") || !strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes"))
            *(int *)field(o, target) = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"))
            *(int *)field(o, target) = 0;
        else
            goto bad;
        return 0;
    }
bad:
    range_text(o, range, sizeof range);
    snprintf(err, errlen, "--%s must be %s, got '%s'", o->name, range, sp_opts_printable(v, shown, sizeof shown));
    return -1;
}

void sp_opts_defaults(const sp_opt_table *t, void *target)
{
    for (int i = 0; i < t->count; i++) {
        const sp_opt *o = &t->rows[i];
        if (!o->dflt) {
            memset(field(o, target), 0, o->size);
            continue;
        }
        char err[300];
        if (set_row(o, target, o->dflt, err, sizeof err) != 0) {
            /* a table whose default breaks its own bounds is a programming error */
            fprintf(stderr, "sparsim: internal error: default of %s: %s\n", o->name, err);
            abort();
        }
    }
}

int sp_opts_set(const sp_opt_table *t, void *target, unsigned char *given, const char *name, const char *value,
                char *err, size_t errlen)
{
    int i = sp_opts_index(t, name);
    if (i < 0)
        return 1;
    if (set_row(&t->rows[i], target, value, err, errlen) != 0)
        return -1;
    if (given)
        given[i] = 1;
    return 0;
}

int sp_opts_parse_argv(const sp_opt_table *t, void *target, unsigned char *given, int argc, char **argv,
                       char **rest, int *nrest, char *err, size_t errlen)
{
    char shown[160];
    if (nrest)
        *nrest = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || !a[2]) {
            if (rest) {
                rest[(*nrest)++] = argv[i];
                continue;
            }
            snprintf(err, errlen, "unexpected argument '%s' (options start with --; see --help)",
                     sp_opts_printable(a, shown, sizeof shown));
            return -1;
        }
        char name[64];
        const char *val = NULL, *eq = strchr(a + 2, '=');
        size_t nl = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
        if (nl >= sizeof name) {
            snprintf(err, errlen, "unknown option '%s' (see --help)", sp_opts_printable(a, shown, sizeof shown));
            return -1;
        }
        memcpy(name, a + 2, nl);
        name[nl] = '\0';
        if (eq)
            val = eq + 1;
        int idx = sp_opts_index(t, name);
        int negated = 0;
        if (idx < 0 && strncmp(name, "no-", 3) == 0) {
            int j = sp_opts_index(t, name + 3);
            if (j >= 0 && t->rows[j].type == SP_OT_BOOL) {
                idx = j;
                negated = 1;
            }
        }
        if (idx < 0) {
            if (rest) {
                rest[(*nrest)++] = argv[i];
                /* its value travels with it, unless it looks like a flag */
                if (!eq && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
                    rest[(*nrest)++] = argv[++i];
                continue;
            }
            snprintf(err, errlen, "unknown option '--%s' (see --help)", sp_opts_printable(name, shown, sizeof shown));
            return -1;
        }
        const sp_opt *o = &t->rows[idx];
        if (o->type == SP_OT_BOOL) {
            if (val && negated) {
                snprintf(err, errlen, "--%s takes no value", name);
                return -1;
            }
            if (!val)
                val = negated ? "false" : "true";
        } else if (!val) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "--%s needs a value", name);
                return -1;
            }
            val = argv[++i];
        }
        if (set_row(o, target, val, err, errlen) != 0)
            return -1;
        if (given)
            given[idx] = 1;
    }
    return 0;
}

/* a JSON value as the text a flag would carry */
static int json_text(const sp_opt *o, const cJSON *v, char *buf, size_t n, const char *origin, char *err,
                     size_t errlen)
{
    if (o->type == SP_OT_BOOL) {
        if (!cJSON_IsBool(v)) {
            snprintf(err, errlen, "%s: \"%s\" must be true or false", origin, o->name);
            return -1;
        }
        snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
        return 0;
    }
    if (cJSON_IsArray(v) && (o->flags & SP_OPT_LIST)) {
        size_t w = 0;
        buf[0] = '\0';
        const cJSON *e;
        cJSON_ArrayForEach(e, v)
        {
            char one[1100];
            if (json_text(o, e, one, sizeof one, origin, err, errlen) != 0)
                return -1;
            if (strchr(one, ',')) {
                snprintf(err, errlen, "%s: \"%s\": a value holds a comma", origin, o->name);
                return -1;
            }
            w += (size_t)snprintf(buf + w, w < n ? n - w : 0, "%s%s", w ? "," : "", one);
            if (w >= n) {
                snprintf(err, errlen, "%s: \"%s\" lists too many values", origin, o->name);
                return -1;
            }
        }
        return 0;
    }
    if (cJSON_IsString(v)) {
        if (strlen(v->valuestring) >= n) {
            snprintf(err, errlen, "%s: value of \"%s\" is too long", origin, o->name);
            return -1;
        }
        snprintf(buf, n, "%s", v->valuestring);
        return 0;
    }
    if (cJSON_IsNumber(v) && o->type != SP_OT_STRING && o->type != SP_OT_CHOICE) {
        double d = v->valuedouble;
        if ((o->type == SP_OT_INT || o->type == SP_OT_U64) && d == floor(d) && fabs(d) < 1e18)
            snprintf(buf, n, "%lld", (long long)d);
        else
            snprintf(buf, n, "%.17g", d);
        return 0;
    }
    if (cJSON_IsNumber(v) && o->type == SP_OT_STRING && (o->flags & SP_OPT_LIST)) {
        snprintf(buf, n, "%.17g", v->valuedouble);
        return 0;
    }
    snprintf(err, errlen, "%s: \"%s\" must be %s", origin, o->name,
             o->type == SP_OT_STRING || o->type == SP_OT_CHOICE ? "a string" : "a number or a string");
    return -1;
}

int sp_opts_apply_json(const sp_opt_table *t, void *target, unsigned char *given, cJSON *obj, int known_only,
                       const char *origin, char *err, size_t errlen)
{
    char shown[160];
    if (!cJSON_IsObject(obj)) {
        snprintf(err, errlen, "%s: the config must be a JSON object", origin);
        return -1;
    }
    for (cJSON *it = obj->child, *next; it; it = next) {
        next = it->next;
        int idx = sp_opts_index(t, it->string);
        if (idx < 0) {
            if (known_only)
                continue;
            snprintf(err, errlen, "%s: unknown option '%s' (see --help)", origin,
                     sp_opts_printable(it->string, shown, sizeof shown));
            return -1;
        }
        const sp_opt *o = &t->rows[idx];
        if (o->flags & SP_OPT_CLI_ONLY) {
            snprintf(err, errlen, "%s: \"%s\" cannot be set in a config file", origin, o->name);
            return -1;
        }
        char val[4096], e2[400];
        if (json_text(o, it, val, sizeof val, origin, err, errlen) != 0)
            return -1;
        if (set_row(o, target, val, e2, sizeof e2) != 0) {
            snprintf(err, errlen, "%s: %s", origin, e2);
            return -1;
        }
        if (given)
            given[idx] = 1;
        cJSON_Delete(cJSON_DetachItemViaPointer(obj, it));
    }
    return 0;
}

void sp_opts_format(const sp_opt *o, const void *target, char *buf, size_t n)
{
    const void *f = cfield(o, target);
    switch (o->type) {
    case SP_OT_INT:
        snprintf(buf, n, "%d", *(const int *)f);
        break;
    case SP_OT_U64:
        snprintf(buf, n, "%llu", (unsigned long long)*(const uint64_t *)f);
        break;
    case SP_OT_DOUBLE:
        snprintf(buf, n, "%.17g", *(const double *)f);
        break;
    case SP_OT_STRING:
        snprintf(buf, n, "%s", (const char *)f);
        break;
    case SP_OT_CHOICE:
        if (o->size != sizeof(int)) {
            snprintf(buf, n, "%s", (const char *)f);
            break;
        }
        snprintf(buf, n, "%d", *(const int *)f);
        for (const sp_opt_choice *c = o->choices; c->name; c++)
            if (c->value == *(const int *)f)
                snprintf(buf, n, "%s", c->name);
        break;
    case SP_OT_BOOL:
        snprintf(buf, n, "%s", *(const int *)f ? "true" : "false");
        break;
    }
}

cJSON *sp_opts_echo(const sp_opt_table *t, const void *target)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < t->count; i++) {
        const sp_opt *r = &t->rows[i];
        if (r->flags & SP_OPT_NO_ECHO)
            continue;
        const void *f = cfield(r, target);
        char buf[1100];
        switch (r->type) {
        case SP_OT_INT:
            cJSON_AddNumberToObject(o, r->name, *(const int *)f);
            break;
        case SP_OT_U64:
            cJSON_AddNumberToObject(o, r->name, (double)*(const uint64_t *)f);
            break;
        case SP_OT_DOUBLE:
            cJSON_AddNumberToObject(o, r->name, *(const double *)f);
            break;
        case SP_OT_BOOL:
            cJSON_AddBoolToObject(o, r->name, *(const int *)f);
            break;
        default:
            sp_opts_format(r, target, buf, sizeof buf);
            cJSON_AddStringToObject(o, r->name, buf);
        }
    }
    return o;
}

/* prints `text` from column `col` on, wrapped at 80 columns, each new line
 * indented by `indent` */
static void wrap(FILE *f, const char *text, int col, int indent)
{
    const char *s = text;
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        /* one word at a time */
        while (len > 0) {
            size_t w = strcspn(s, " \n");
            if (w > len)
                w = len;
            if (col + (int)w > 79 && col > indent) {
                fprintf(f, "\n%*s", indent, "");
                col = indent;
            }
            fwrite(s, 1, w, f);
            col += (int)w;
            s += w;
            len -= w;
            if (len > 0 && *s == ' ') {
                if (col + 1 <= 79)
                    fputc(' ', f);
                col++;
                s++;
                len--;
            }
        }
        if (nl) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            s = nl + 1;
        }
    }
}

/* the flag as --help and the reference name it: --NAME VALUE, --NAME a|b,
 * --no-NAME for a flag that is on by default */
static void flag_text(const sp_opt *o, char *head, size_t n)
{
    if (o->type == SP_OT_BOOL) {
        int on = o->dflt && strcmp(o->dflt, "true") == 0;
        snprintf(head, n, "--%s%s", on ? "no-" : "", o->name);
    } else if (o->type == SP_OT_CHOICE && !o->metavar) {
        size_t w = (size_t)snprintf(head, n, "--%s ", o->name);
        for (const sp_opt_choice *c = o->choices; c->name && w < n; c++)
            w += (size_t)snprintf(head + w, n - w, "%s%s", c == o->choices ? "" : "|", c->name);
    } else {
        snprintf(head, n, "--%s %s", o->name, o->metavar ? o->metavar : "X");
    }
}

/* the default as --help says it; NULL: none to say */
static const char *default_text(const sp_opt *o)
{
    const char *d = o->dflt_help ? o->dflt_help : o->dflt;
    if (o->type == SP_OT_BOOL || !d)
        return NULL;
    return d[0] ? d : "none";
}

static void help_row_text(const sp_opt *o, const char *help, FILE *f)
{
    const int indent = 20;
    char head[128] = "  ";
    flag_text(o, head + 2, sizeof head - 2);
    int col = (int)strlen(head);
    fputs(head, f);
    if (col + 2 > indent)
        fprintf(f, "\n%*s", indent, "");
    else
        fprintf(f, "%*s", indent - col, "");
    col = indent;
    char text[1400];
    const char *d = default_text(o);
    if (!d)
        snprintf(text, sizeof text, "%s", help);
    else
        snprintf(text, sizeof text, "%s (default: %s)", help, d);
    wrap(f, text, col, indent);
    fputc('\n', f);
}

/* a row's help and brief line: its own text, or the text its table writes */
static const char *help_of(const sp_opt *o) { return o->help_of ? o->help_of() : o->help; }
static const char *brief_of(const sp_opt *o)
{
    return o->brief_of ? o->brief_of() : o->brief ? o->brief : help_of(o);
}

static void help_row(const sp_opt *o, FILE *f) { help_row_text(o, help_of(o), f); }

static int group_index(const sp_opt_table *t, const char *key)
{
    for (int g = 0; g < t->ngroups; g++)
        if (strcmp(t->groups[g].key, key) == 0)
            return g;
    return -1;
}

static int in_group(const sp_opt_table *t, const sp_opt *o, int g)
{
    return o->group && strcmp(o->group, t->groups[g].key) == 0;
}

static void help_one_group(const sp_opt_table *t, int g, FILE *f)
{
    fprintf(f, "  %s:\n", t->groups[g].title);
    for (int i = 0; i < t->count; i++)
        if (in_group(t, &t->rows[i], g))
            help_row(&t->rows[i], f);
}

void sp_opts_help(const sp_opt_table *t, FILE *f)
{
    if (t->groups) {
        for (int g = 0; g < t->ngroups; g++)
            help_one_group(t, g, f);
        return;
    }
    for (int i = 0; i < t->count; i++)
        help_row(&t->rows[i], f);
}

void sp_opts_help_everyday(const sp_opt_table *t, FILE *f)
{
    for (int i = 0; i < t->count; i++)
        if (t->rows[i].flags & SP_OPT_EVERYDAY)
            help_row_text(&t->rows[i], brief_of(&t->rows[i]), f);
}

void sp_opts_help_groups(const sp_opt_table *t, FILE *f)
{
    for (int g = 0; g < t->ngroups; g++) {
        int cnt = 0;
        for (int i = 0; i < t->count; i++)
            cnt += in_group(t, &t->rows[i], g);
        char head[64], text[300];
        snprintf(head, sizeof head, "  --help=%s", t->groups[g].key);
        snprintf(text, sizeof text, "%s (%d options)", t->groups[g].title, cnt);
        fprintf(f, "%-24s", head);
        wrap(f, text, strlen(head) < 24 ? 24 : (int)strlen(head), 24);
        fputc('\n', f);
    }
}

int sp_opts_help_group(const sp_opt_table *t, const char *key, FILE *f)
{
    int g = group_index(t, key);
    if (g < 0)
        return -1;
    if (f)
        help_one_group(t, g, f);
    return 0;
}

/* `text` in a Markdown table cell: '|' escaped, line breaks as spaces */
static void md_cell(const char *text, FILE *f)
{
    for (const char *s = text; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static void md_row(const sp_opt *o, FILE *f)
{
    char head[128], range[400];
    flag_text(o, head, sizeof head);
    range_text(o, range, sizeof range);
    fputs("| `", f);
    md_cell(head, f);
    fputs("` | ", f);
    const char *d = default_text(o);
    if (o->type == SP_OT_BOOL) /* shown as --help shows it: --no-NAME when NAME is on by default */
        fputs("not given", f);
    else if (d) {
        fputs("`", f);
        md_cell(d, f);
        fputs("`", f);
    }
    fputs(" | ", f);
    md_cell(range, f);
    fputs(" | ", f);
    md_cell(help_of(o), f);
    if (o->flags & SP_OPT_CLI_ONLY)
        fputs(" *A flag only, not a config key.*", f);
    fputs(" |\n", f);
}

static void md_header(FILE *f) { fputs("| option | default | allowed | what it does |\n|---|---|---|---|\n", f); }

void sp_opts_markdown(const sp_opt_table *t, const char *level, FILE *f)
{
    if (!t->groups) {
        md_header(f);
        for (int i = 0; i < t->count; i++)
            md_row(&t->rows[i], f);
        return;
    }
    for (int g = 0; g < t->ngroups; g++) {
        fprintf(f, "%s %s\n\n`--help=%s`\n\n", level, t->groups[g].title, t->groups[g].key);
        md_header(f);
        for (int i = 0; i < t->count; i++)
            if (in_group(t, &t->rows[i], g))
                md_row(&t->rows[i], f);
        fputc('\n', f);
    }
}

const char *sp_opts_help_arg(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return "";
        if (strncmp(argv[i], "--help=", 7) == 0)
            return argv[i] + 7;
    }
    return NULL;
}

cJSON *sp_opts_read_config(const char *path, char *err, size_t errlen)
{
    char e2[600];
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read config file '%s': %s", path, strerror(errno));
        return NULL;
    }
    fclose(f);
    cJSON *j = sp_json_file_checked(path, 1 << 24, e2, sizeof e2);
    if (!j) {
        snprintf(err, errlen, "%s", e2);
        return NULL;
    }
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "%s: the config must be a JSON object", path);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}
