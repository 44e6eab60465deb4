/* test_cu.c - the driver facts of runtime/cu.c: which CUDA release first
 * loads each PTX ISA version (NVIDIA's PTX release history) and the driver
 * branch named for it, and which loads each cubin ELF ABI version; and that
 * the embedded table describes each blob as its own bytes do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ptx/cubin.h"
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

/* ELF ABI version of a cubin -> first CUDA version that loads it. */
static void test_abi_driver(void)
{
    CHECK(cu_cubin_abi_driver(7) == 11000);
    CHECK(cu_cubin_abi_driver(8) == 13000);
    CHECK(cu_cubin_abi_driver(9) == 0);
}

/* Each PTX blob's isa field is the .version its text declares, 7.0 or
 * newer; each cubin is native code for the sm its arch field names, of the
 * ELF ABI version its abi field names, assembled from its module's PTX (the
 * same isa); every module has PTX for compute_75 and a cubin for each GPU
 * gpubatch ships native code for. */
static void test_blobs(void)
{
    static const int sass[] = {75, 80, 86, 89, 90, 100, 120};
    int n = 0, modules = 0, module_isa = 0, next_sass = 0;
    for (int i = 0; ptx_blobs[i].module; i++, n++) {
        const ptx_blob *b = &ptx_blobs[i];
        char *data;
        CHECKF(ptx_blob_unpack(b, &data) == 0, "%s: cannot inflate", b->module);
        if (!data)
            continue;
        if (b->kind == PTX_BLOB_PTX) {
            const char *line = strstr(data, "\n.version ");
            int major = 0, minor = 0;
            CHECKF(line && sscanf(line, "\n.version %d.%d", &major, &minor) == 2,
                   "%s: no .version", b->module);
            CHECKF(b->isa == major * 10 + minor, "%s: isa %d, .version %d.%d", b->module, b->isa,
                   major, minor);
            CHECKF(b->isa >= 70, "%s: isa %d", b->module, b->isa);
            CHECKF(b->arch == 75 && b->abi == 0 && strlen(data) == b->size, "%s: compute_%d",
                   b->module, b->arch);
            CHECKF(i == 0 || strcmp(b->module, ptx_blobs[i - 1].module), "%s: PTX twice", b->module);
            CHECKF(i == 0 || next_sass == 7, "%s: %d cubins before it", b->module, next_sass);
            modules++;
            module_isa = b->isa;
            next_sass = 0;
        } else {
            CHECKF(i > 0 && !strcmp(b->module, ptx_blobs[i - 1].module), "%s: cubin of no PTX",
                   b->module);
            CHECKF(next_sass < 7 && b->arch == sass[next_sass], "%s: sm_%d", b->module, b->arch);
            const unsigned char *elf = (const unsigned char *)data;
            CHECKF(cubin_sm(elf, b->size) == b->arch, "%s: sm_%d holds sm_%d", b->module, b->arch,
                   cubin_sm(elf, b->size));
            CHECKF(b->abi == cubin_abi(elf) && b->isa == module_isa, "%s sm_%d: abi %d isa %d",
                   b->module, b->arch, b->abi, b->isa);
            next_sass++;
        }
        free(data);
    }
    CHECK(n > 0 && modules > 0 && next_sass == 7);
}

/* A driver call that returns r. */
static CUresult failing_call(CUresult r)
{
    return r;
}

/* A function that makes one driver call through CU_TRY. */
static int tried(CUresult r)
{
    CU_TRY(failing_call(r));
    return 0;
}

/* The same through CU_TRY_GOTO. */
static int tried_goto(CUresult r)
{
    int err = 0;
    CU_TRY_GOTO(failing_call(r), err, out);
out:
    return err;
}

/* CU_TRY hands back the project's codes, never a driver number (whose range
 * would overlap io_error's: CUDA_ERROR_DEINITIALIZED is 4, IO_ERR_CORRUPT
 * -4), and keeps the driver's number and name in the recorded line. */
static void test_try_maps_results(void)
{
    static const struct {
        CUresult r;
        int code;
    } cases[] = {
        {CUDA_SUCCESS, 0},
        {CUDA_ERROR_INVALID_VALUE, GPU_ERR_DRIVER},
        {CUDA_ERROR_OUT_OF_MEMORY, GPU_ERR_OUT_OF_MEMORY},
        {4, GPU_ERR_DRIVER},
        {12, GPU_ERR_DRIVER},
        {CUDA_ERROR_NO_DEVICE, GPU_ERR_DRIVER},
        {CUDA_ERROR_ILLEGAL_ADDRESS, GPU_ERR_DRIVER},
        {CUDA_ERROR_LAUNCH_FAILED, GPU_ERR_DRIVER},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cu_clear_failure();
        int rc = tried(cases[i].r);
        CHECKF(rc == cases[i].code, "CU_TRY of %d: %d, expected %d", cases[i].r, rc,
               cases[i].code);
        CHECK(cu_error(cases[i].r) == cases[i].code);
        CHECK(cu_last_result() == cases[i].r);
        char want[64];
        snprintf(want, sizeof want, "CUDA error %d", cases[i].r);
        CHECKF(!cases[i].r || (strstr(cu_last_failure(), "failing_call at ") &&
                               strstr(cu_last_failure(), want)),
               "recorded: '%s'", cu_last_failure());
        cu_clear_failure();
        CHECK(tried_goto(cases[i].r) == cases[i].code);
    }
    cu_clear_failure();
}

int main(void)
{
    RUN(test_isa_driver);
    RUN(test_driver_text);
    RUN(test_abi_driver);
    RUN(test_blobs);
    RUN(test_try_maps_results);
    return check_summary();
}
