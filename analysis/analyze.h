/* analyze.h - the analyze command (reads run folders and sweep CSVs). */
#ifndef SPARSIM_ANALYZE_H
#define SPARSIM_ANALYZE_H

int sp_cmd_analyze(int argc, char **argv);
int sp_cmd_compare(int argc, char **argv);

#endif
