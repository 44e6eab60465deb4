/* test_cu.c - the driver facts of runtime/cu.c: which CUDA release first
 * loads each PTX ISA version (NVIDIA's PTX release history) and the driver
 * branch named for it; and that the embedded table carries the ISA version
 * each PTX blob's own .version line declares. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "runtime/cu.h"
#include "runtime/ptx_blobs.h"

/* PTX ISA version -> first CUDA version that loads it. */
static void test_isa_driver(void)
{
    static const int pairs[][2] = {
        {60, 11000}, {70, 11000}, {71, 11010}, {74, 11040}, {78, 11080}, {80, 12000},
        {82, 12020}, {85, 12050}, {86, 12070}, {87, 12080}, {88, 12090}, {90, 13000},
        {79, 0},     {89, 0},     {99, 0},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        CHECKF(cu_ptx_isa_driver(pairs[i][0]) == pairs[i][1], "ISA %d: %d, expected %d",
               pairs[i][0], cu_ptx_isa_driver(pairs[i][0]), pairs[i][1]);
}

/* CUDA version -> "CUDA x.y (driver Rnnn)". */
static void test_driver_text(void)
{
    static const struct {
        int cuda;
        const char *text;
    } cases[] = {
        {11000, "CUDA 11.0 (driver R450)"}, {11040, "CUDA 11.4 (driver R470)"},
        {12000, "CUDA 12.0 (driver R525)"}, {12020, "CUDA 12.2 (driver R535)"},
        {12040, "CUDA 12.4 (driver R550)"}, {12080, "CUDA 12.8 (driver R570)"},
        {13000, "CUDA 13.0 (driver R580)"}, {10020, "CUDA 10.2"},
        {12060, "CUDA 12.6"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECKF(!strcmp(cu_driver_text(cases[i].cuda, buf, sizeof buf), cases[i].text),
               "%d: [%s]", cases[i].cuda, buf);
}

/* Each blob's isa field is the .version its text declares, 7.0 or newer. */
static void test_blob_isa(void)
{
    int n = 0;
    for (int i = 0; ptx_blobs[i].module; i++, n++) {
        const char *line = strstr(ptx_blobs[i].data, "\n.version ");
        int major = 0, minor = 0;
        CHECKF(line && sscanf(line, "\n.version %d.%d", &major, &minor) == 2, "%s: no .version",
               ptx_blobs[i].module);
        CHECKF(ptx_blobs[i].isa == major * 10 + minor, "%s: isa %d, .version %d.%d",
               ptx_blobs[i].module, ptx_blobs[i].isa, major, minor);
        CHECKF(ptx_blobs[i].isa >= 70, "%s: isa %d", ptx_blobs[i].module, ptx_blobs[i].isa);
    }
    CHECK(n > 0);
}

int main(void)
{
    test_isa_driver();
    test_driver_text();
    test_blob_isa();
    return check_summary();
}
