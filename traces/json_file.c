/* json_file.c - reading a JSON output back (summary.json and friends). */
#include "trace.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

cJSON *sp_json_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    cJSON *j = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long len = ftell(f);
        if (len >= 0 && fseek(f, 0, SEEK_SET) == 0) {
            char *buf = malloc((size_t)len + 1);
            if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len) {
                buf[len] = '\0';
                j = cJSON_Parse(buf);
            }
            free(buf);
        }
    }
    fclose(f);
    return j;
}
