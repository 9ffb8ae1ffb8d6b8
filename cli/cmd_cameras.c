#include "cli.h"
int am_cmd_cameras(int argc, char **argv) { (void)argc; (void)argv; return 2; }
