/* Replays fuzz inputs through a libFuzzer entry point without libFuzzer (stb's fuzz_main.c):
 * every file in every directory given (missing directories are skipped). gcc builds use this
 * as a CTest so every corpus entry and every input that once crashed stays fixed. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n < 0) n = 0;
    uint8_t *buf = malloc((size_t)n + 1);
    if (!buf) {
        fclose(f);
        return 0;
    }
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    return 1;
}

int main(int argc, char **argv)
{
    int count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) continue;
        if (S_ISREG(st.st_mode)) {
            count += replay_file(argv[i]);
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            count += replay_file(path);
        }
        closedir(d);
    }
    printf("replayed %d inputs\n%d passed, 0 failed\n", count, count);
    return 0;
}
