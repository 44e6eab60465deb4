/* inflate.c - the host's deflate decoder (see inflate.h).
 *
 * Speed comes from a 64-bit bit buffer refilled eight bytes at a time, one
 * table lookup per symbol (12-bit literal/length and 8-bit distance primary
 * tables, with subtables for longer codes) whose entry holds everything the
 * symbol needs, or two literals whose codes fit in the 12 bits together (one
 * lookup for a frequent short code and its neighbour), up to three such
 * literal entries per refill with the next symbol's entry looked up before
 * the refill (which only adds bits above it), and copies of eight bytes at a
 * time, which may run up to seven bytes past a match: the fast loop runs
 * only while a longest match and that overrun fit, so nothing past out_cap
 * is ever written. The byte and the symbol decoders are one body
 * (huff_body) compiled for each, and on x86-64 once more each for BMI1 and
 * BMI2, the set used chosen once at run time. A long span of mostly
 * literals may be decoded as two halves at once, their lookups overlapping
 * (decode_halves). */
#include "inflate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "io/cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
/* The BMI2 variant: BMI2's shifts by a count in any register (no flags, no
 * CL) and BMI1's and BMI2's masks (andn, bzhi) shorten the bit reader's
 * dependency chains. AVX2 was measured to add nothing. */
#define INFLATE_MULTI 1
#define INFLATE_ATTR_BMI2 __attribute__((target("bmi,bmi2")))
#else
#define INFLATE_MULTI 0
#endif

#define LIT_BITS 12
#define LITS_PER_REFILL ((56 - LIT_BITS) / LIT_BITS)
#define DIST_BITS 8
#define MAX_CODE_BITS 15
#define LIT_MASK ((1u << LIT_BITS) - 1)
#define NUM_LITLEN 288
#define NUM_DIST 32
/* Room for the primary table and every subtable a complete code can need. */
#define LIT_TABLE_SIZE ((1u << LIT_BITS) + 1024u)
#define DIST_TABLE_SIZE ((1u << DIST_BITS) + 512u)

/* A table entry: bits 0-7 the code's length and its extra bits' (in a
 * subtable pointer: the subtable's index bits), 8-11 the extra bits, flags
 * at 12-15 and the literal, length base, distance base or subtable offset
 * at 16-31. So one shift takes a length or a distance whole, and its extra
 * bits come from the bits before it, off the bit buffer's chain.
 * A primary literal entry may hold two literals whose codes fit in LIT_BITS
 * together (E_PAIR): the first at 16-23, the second at 24-31, bits 0-7 the
 * two codes' length and 8-11 the first code's length. Or a literal and the
 * length code after it (E_LIT | E_EOB, never met otherwise): the literal at
 * 16-23, the length symbol's index at 24-28 and its extra bits at 29-31,
 * bits 0-7 the two codes' length and the extra bits', 8-11 the literal's. */
#define E_BAD (1u << 12)
#define E_LIT (1u << 13)
#define E_EOB (1u << 14)
#define E_SUB (1u << 15)
#define E_LEN(e) ((e) & 0xffu)
#define E_EXTRA(e) (((e) >> 8) & 0xfu)
#define E_VAL(e) ((e) >> 16)
#define E_PAIR(e) ((e) & 0xf00u) /* nonzero in a literal entry: two literals */
#define E_LITLEN (E_LIT | E_EOB)  /* a literal and a length */
#define IS_LITS(e) (((e) & E_LITLEN) == E_LIT) /* one or two literals only */
/* A whole match's codes, length and distance, in one primary entry: E_LEN
 * their bits with the distance's extra bits, E_EXTRA those, the length
 * less 3 in bits 16-23 and the distance symbol in bits 24-28. */
#define E_MATCH (E_BAD | E_EOB)
#define IS_MATCH(e) (((e) & E_MATCH) == E_MATCH)
#define M_LEN(e) ((((e) >> 16) & 0xffu) + 3)
#define M_DIST_SYM(e) ((e) >> 24)

static const uint16_t len_base[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                      15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                      67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
/* The order in which a dynamic header lists the code-length code's lengths. */
static const uint8_t clen_order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                       11, 4,  12, 3, 13, 2, 14, 1, 15};

/* Decoding tables of one block. */
typedef struct {
    uint32_t lit[LIT_TABLE_SIZE];
    uint32_t dist[DIST_TABLE_SIZE];
} inf_tables;

static inf_tables fixed_tables;
static uint32_t litlen_entries[NUM_LITLEN], dist_entries[NUM_DIST];
/* The length symbol's index (0..28) of each length base. */
static uint8_t len_index[259];
/* The Kraft sum, in 128ths, of four 3-bit code-length-code lengths packed
 * as a dynamic header holds them: 128 for a complete code. */
static uint16_t clen_kraft4[1u << 12];
static pthread_once_t fixed_once = PTHREAD_ONCE_INIT;

/* The entry (without its length) of literal/length symbol s. */
static uint32_t litlen_entry(unsigned s)
{
    if (s < 256)
        return E_LIT | (uint32_t)s << 16;
    if (s == 256)
        return E_EOB;
    if (s < 286)
        return (uint32_t)len_extra[s - 257] << 8 | (uint32_t)len_base[s - 257] << 16;
    return E_BAD;
}

/* The entry (without its length) of distance symbol s. */
static uint32_t dist_entry(unsigned s)
{
    if (s < 30)
        return (uint32_t)dist_extra[s] << 8 | (uint32_t)dist_base[s] << 16;
    return E_BAD;
}

/* Reverses the low n bits of v. */
static unsigned reverse_bits(unsigned v, unsigned n)
{
    unsigned r = 0;
    for (unsigned i = 0; i < n; i++, v >>= 1)
        r = r << 1 | (v & 1);
    return r;
}

/* Checks lens[0..n) as a canonical code the way zlib does: never
 * over-subscribed; incomplete only when `single_ok` and it is one code of
 * one bit. Returns its longest length, 0 for an empty code, -1 if invalid. */
static int code_check(const uint8_t *lens, unsigned n, int single_ok, unsigned *count)
{
    memset(count, 0, sizeof(unsigned) * (MAX_CODE_BITS + 1));
    for (unsigned s = 0; s < n; s++)
        count[lens[s]]++;
    int max = MAX_CODE_BITS;
    while (max > 0 && count[max] == 0)
        max--;
    if (max == 0)
        return 0;
    int left = 1;
    for (int len = 1; len <= MAX_CODE_BITS; len++) {
        left = (left << 1) - (int)count[len];
        if (left < 0)
            return -1;
    }
    if (left > 0 && !(single_ok && max == 1))
        return -1;
    return max;
}

/* A code's symbols in canonical order (by length, then by value), where
 * each length's run begins in it, and each symbol's reversed code where it
 * is at most the table's bits long: what pair_literals needs. */
typedef struct {
    uint16_t sorted[NUM_LITLEN];
    unsigned start[MAX_CODE_BITS + 2]; /* length len: sorted[start[len] .. start[len + 1]) */
    uint16_t codes[NUM_LITLEN];
} code_order;

/* Builds the lookup table of the code lens[0..n) with `bits` primary index
 * bits; entry[s] is symbol s's entry without its length. Returns 0, or -1
 * for a code zlib refuses. What no code reaches (an empty or a one-bit
 * code) decodes as E_BAD. The codes come in canonical order, shortest
 * first, with their bits reversed (the stream's order) and counted up in
 * that order; the primary table grows by doubling, so that a code of len
 * bits is written once and copied with the table into every entry whose
 * low len bits it is. Where order is not NULL, it is filled in. */
static int build_table(uint32_t *table, const uint8_t *lens, unsigned n, unsigned bits,
                       const uint32_t *entry, int single_ok, code_order *order)
{
    unsigned count[MAX_CODE_BITS + 1];
    int max = code_check(lens, n, single_ok, count);
    if (max < 0)
        return -1;
    unsigned primary = 1u << bits, filled = 1;
    table[0] = E_BAD;
    uint16_t own[NUM_LITLEN], *sorted = order ? order->sorted : own;
    unsigned offs[MAX_CODE_BITS + 2];
    offs[1] = 0;
    for (unsigned len = 1; len <= MAX_CODE_BITS; len++)
        offs[len + 1] = offs[len] + count[len];
    if (order)
        memcpy(order->start, offs, sizeof offs);
    for (unsigned s = 0; s < n; s++)
        if (lens[s])
            sorted[offs[lens[s]]++] = (uint16_t)s;
    unsigned rev = 0, k = 0, next_sub = primary, sub_prefix = ~0u, sub_start = 0, sub_bits = 0;
    for (unsigned len = 1; len <= (unsigned)max; len++) {
        for (; len <= bits && filled < (1u << len); filled *= 2)
            memcpy(table + filled, table, filled * sizeof *table);
        if (len > bits)
            for (; filled < primary; filled *= 2)
                memcpy(table + filled, table, filled * sizeof *table);
        for (unsigned c = 0; c < count[len]; c++, k++) {
            uint32_t e = entry[sorted[k]] + len + E_EXTRA(entry[sorted[k]]);
            if (len <= bits) {
                table[rev] = e;
                if (order)
                    order->codes[sorted[k]] = (uint16_t)rev;
            } else {
                unsigned prefix = rev & (primary - 1);
                if (prefix != sub_prefix) {
                    /* A new subtable: as many index bits as the longest
                     * code under this prefix needs, found from the codes
                     * left. */
                    unsigned room, left[MAX_CODE_BITS + 1];
                    memcpy(left, count, sizeof left);
                    left[len] -= c;
                    sub_bits = len - bits;
                    room = 1u << sub_bits;
                    while (sub_bits + bits < (unsigned)max) {
                        int r = (int)room - (int)left[sub_bits + bits];
                        if (r <= 0)
                            break;
                        sub_bits++;
                        room = (unsigned)r << 1;
                    }
                    sub_prefix = prefix;
                    sub_start = next_sub;
                    next_sub += 1u << sub_bits;
                    table[prefix] = E_SUB | sub_start << 16 | sub_bits;
                }
                for (unsigned i = rev >> bits; i < (1u << sub_bits); i += 1u << (len - bits))
                    table[sub_start + i] = e;
            }
            /* the next code, counted up with its bits reversed */
            unsigned inc = 1u << (len - 1);
            while (rev & inc)
                inc >>= 1;
            rev = inc ? (rev & (inc - 1)) + inc : 0;
        }
    }
    for (; filled < primary; filled *= 2)
        memcpy(table + filled, table, filled * sizeof *table);
    return 0;
}

/* Turns every primary literal entry whose code leaves room for a whole
 * second literal or length code within LIT_BITS into a two-literal or a
 * literal-and-length entry, so that the decoder takes both with one lookup
 * (and data whose literals and matches alternate takes one path). The
 * table holds the code that build_table put in order o. A literal of L
 * bits lies at its code c and at every c + (k << L), k being the bits that
 * follow it, which the entry k decodes. So the followers that fit after L
 * bits are found once for each length L, all before any entry changes, and
 * only the entries they pair are written: a few microseconds a block,
 * which matters where blocks are short (pigz -1 writes one every 14 KB of
 * float data). */
static void pair_literals(uint32_t *table, const code_order *o)
{
    unsigned shortest = 1;
    while (shortest <= LIT_BITS && o->start[shortest] == o->start[shortest + 1])
        shortest++;
    if (2 * shortest > LIT_BITS)
        return; /* no two codes fit */
    unsigned longest = LIT_BITS - shortest; /* the longest first code a follower fits */
    /* the literals of length L: o->sorted[first[L] .. end[L]), the values
     * below 256 that come first in the length's run */
    unsigned first[LIT_BITS + 1], end[LIT_BITS + 1];
    for (unsigned len = 1; len <= longest; len++) {
        unsigned k = first[len] = o->start[len];
        while (k < o->start[len + 1] && o->sorted[k] < 256)
            k++;
        end[len] = k;
    }
    /* the pairs after a first code of length L, pk/pv[from[L] .. from[L + 1]):
     * the bits k that follow it and the entry less the first literal; all
     * read before any is written, since an entry k may itself be paired */
    uint16_t pk[1u << LIT_BITS];
    uint32_t pv[1u << LIT_BITS];
    unsigned from[LIT_BITS + 2], npairs = 0;
    for (unsigned len = 1; len <= longest; len++) {
        from[len] = npairs;
        if (first[len] == end[len])
            continue; /* no literal of this length */
        for (unsigned k = 0; k < 1u << (LIT_BITS - len); k++) {
            uint32_t f = table[k], code = E_LEN(f) - E_EXTRA(f);
            if (len + code > LIT_BITS)
                continue;
            if (f & E_LIT)
                pv[npairs] = E_LIT | (f >> 16) << 24 | len << 8 | (len + code);
            else if (!(f & (E_BAD | E_EOB | E_SUB)))
                pv[npairs] = E_LITLEN | (uint32_t)len_index[E_VAL(f)] << 24 | E_EXTRA(f) << 29 |
                             len << 8 | (len + E_LEN(f));
            else
                continue;
            pk[npairs++] = (uint16_t)k;
        }
    }
    from[longest + 1] = npairs;
    for (unsigned len = 1; len <= longest; len++)
        for (unsigned p = from[len]; p < from[len + 1]; p++)
            for (unsigned q = first[len]; q < end[len]; q++)
                table[o->codes[o->sorted[q]] + ((unsigned)pk[p] << len)] =
                    pv[p] | (uint32_t)o->sorted[q] << 16;
}

/* The distance symbol whose base distance is base (RFC 1951 3.2.5: from 5
 * on, two symbols for each power of two, their bases 1 + 2^k and
 * 1 + 3 * 2^(k-1)). */
static unsigned dist_symbol(unsigned base)
{
    if (base <= 4)
        return base - 1;
    unsigned k = 31u - (unsigned)__builtin_clz(base - 1);
    return 2 * k + (((base - 1) >> (k - 1)) & 1);
}

/* Turns every primary entry of a length code whose length code, extra bits
 * and a following distance code together fit in LIT_BITS into an E_MATCH
 * entry, so that the decoder takes a match's codes with one lookup and
 * keeps enough bits for the next symbol's without a refill: data made of
 * short matches (integers, say) waits on half as many lookups. A length
 * symbol s of L code bits and X extra bits lies at its code c, with the
 * extra value x at c + (x << L), and the distance code follows at bit
 * L + X; the entries are written for the distance codes that the primary
 * distance table holds whole and that fit. The table holds the code that
 * build_table put in order o; dt is the block's distance table. */
static void add_matches(uint32_t *lt, const uint32_t *dt, const code_order *o)
{
    /* the length symbols whose codes and extra bits leave room, and the
       least bits any of them takes */
    uint16_t syms[29];
    uint8_t sym_len[29];
    unsigned nsyms = 0, least = LIT_BITS;
    for (unsigned len = 1; len < LIT_BITS; len++) {
        for (unsigned q = o->start[len]; q < o->start[len + 1]; q++) {
            unsigned s = o->sorted[q];
            if (s <= 256 || s >= 286)
                continue; /* literals come first; the end of block, invalid codes */
            unsigned head = len + len_extra[s - 257];
            if (head >= LIT_BITS)
                continue;
            syms[nsyms] = (uint16_t)s;
            sym_len[nsyms++] = (uint8_t)len;
            least = head < least ? head : least;
        }
    }
    if (nsyms == 0)
        return;
    /* each primary distance entry's part of a match entry, and its code's
       bits (more than any room where the entry is not one whole code), for
       the entries that the most room can index */
    unsigned span = 1u << (LIT_BITS - least < DIST_BITS ? LIT_BITS - least : DIST_BITS);
    uint32_t part[1u << DIST_BITS];
    uint8_t code_bits[1u << DIST_BITS];
    for (unsigned k = 0; k < span; k++) {
        uint32_t d = dt[k];
        code_bits[k] = LIT_BITS + 1;
        if (d & (E_SUB | E_BAD))
            continue;
        code_bits[k] = (uint8_t)(E_LEN(d) - E_EXTRA(d));
        part[k] = E_LEN(d) | E_EXTRA(d) << 8 | dist_symbol(E_VAL(d)) << 24;
    }
    for (unsigned i = 0; i < nsyms; i++) {
        unsigned s = syms[i], len = sym_len[i], extra = len_extra[s - 257], head = len + extra;
        unsigned room = LIT_BITS - head;
        for (unsigned x = 0; x < 1u << extra; x++) {
            uint32_t m = E_MATCH | (uint32_t)(len_base[s - 257] + x - 3) << 16 | head;
            unsigned at = o->codes[s] | x << len;
            for (unsigned j = 0; j < 1u << room; j++) {
                unsigned k = j & (span - 1);
                if (code_bits[k] <= room)
                    lt[at | j << head] = m + part[k];
            }
        }
    }
}

/* Builds the symbols' entries and the fixed-Huffman block tables (RFC 1951
 * 3.2.6), once. */
static void build_fixed(void)
{
    uint8_t lens[NUM_LITLEN];
    unsigned s = 0;
    for (; s < 144; s++)
        lens[s] = 8;
    for (; s < 256; s++)
        lens[s] = 9;
    for (; s < 280; s++)
        lens[s] = 7;
    for (; s < NUM_LITLEN; s++)
        lens[s] = 8;
    for (unsigned i = 0; i < NUM_LITLEN; i++)
        litlen_entries[i] = litlen_entry(i);
    for (unsigned i = 0; i < 29; i++)
        len_index[len_base[i]] = (uint8_t)i;
    for (unsigned i = 0; i < NUM_DIST; i++)
        dist_entries[i] = dist_entry(i);
    code_order order;
    build_table(fixed_tables.lit, lens, NUM_LITLEN, LIT_BITS, litlen_entries, 0, &order);
    memset(lens, 5, NUM_DIST);
    build_table(fixed_tables.dist, lens, NUM_DIST, DIST_BITS, dist_entries, 0, NULL);
    add_matches(fixed_tables.lit, fixed_tables.dist, &order);
    for (unsigned v = 0; v < (1u << 12); v++) {
        unsigned sum = 0;
        for (unsigned k = 0; k < 12; k += 3)
            sum += (0x80u >> ((v >> k) & 7)) & 0x7fu;
        clen_kraft4[v] = (uint16_t)sum;
    }
}

/* Bit reader over a span: bits come out least significant first. Past the
 * span's end it feeds zero bytes and counts them in `over`, so a block read
 * past the end is noticed at its end (or as soon as `over` shows it). */
typedef struct {
    const uint8_t *p, *end, *start;
    uint64_t buf;
    unsigned n;
    size_t over;
} bits_t;

/* Little-endian 64-bit load. */
static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Fills the buffer to at least 56 bits from 8 bytes that are known to be
 * left in the span: one load, the bits above those held. */
static inline void refill_fast(bits_t *b)
{
    b->buf |= load64(b->p) << b->n;
    b->p += (63 - b->n) >> 3;
    b->n |= 56;
}

/* Fills the buffer to at least 56 bits. */
static inline void refill(bits_t *b)
{
    if (b->end - b->p >= 8) {
        refill_fast(b);
        return;
    }
    while (b->n <= 56) {
        if (b->p < b->end)
            b->buf |= (uint64_t)*b->p++ << b->n;
        else
            b->over++;
        b->n += 8;
    }
}

/* Drops n bits (n <= b->n). */
static inline void drop(bits_t *b, unsigned n)
{
    b->buf >>= n;
    b->n -= n;
}

/* Takes n bits (n <= 32, n <= b->n). */
static inline unsigned take(bits_t *b, unsigned n)
{
    unsigned v = (unsigned)(b->buf & ((1ull << n) - 1));
    drop(b, n);
    return v;
}

/* Takes a code of `total` bits whose last `extra` are extra bits, and
 * returns those (total <= b->n): one shift of the buffer, the extra bits
 * read from its bits before. */
static inline unsigned extra_bits(bits_t *b, unsigned total, unsigned extra)
{
    uint64_t before = b->buf;
    drop(b, total);
    return (unsigned)((before >> (total - extra)) & ((1u << extra) - 1));
}

/* The bit offset of the reader in its span. */
static inline uint64_t bit_pos(const bits_t *b)
{
    return ((uint64_t)(b->p - b->start) + b->over) * 8 - b->n;
}

/* Whether the reader has gone past the span's end. */
static inline int past_end(const bits_t *b)
{
    return bit_pos(b) > (uint64_t)(b->end - b->start) * 8;
}

/* Stores the 8 bytes of v at p. */
static inline void store64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

/* Copies 16 bytes from src to dst, which lies at least 16 bytes after it. */
static inline void copy16(uint8_t *dst, const uint8_t *src)
{
    uint8_t t[16];
    memcpy(t, src, 16);
    memcpy(dst, t, 16);
}

/* Copies a match of len bytes from dist bytes back to dst, writing up to 31
 * bytes past its end (the fast loop's slack): for dist >= 16, 32 bytes a
 * step in 16-byte moves, each reading only bytes written before it, the
 * first step taken before any test of the length (most matches need only
 * it); 8 a step for dist >= 8; a byte repeated for dist 1; for dist 2..7
 * words stepping by dist, each of whose first dist bytes repeats the
 * pattern (the rest is overwritten by the next word, or lies in the
 * slack). */
static inline void copy_match(uint8_t *dst, size_t dist, unsigned len)
{
    const uint8_t *src = dst - dist;
    uint8_t *end = dst + len;
    if (dist >= 16) {
        do {
            copy16(dst, src);
            copy16(dst + 16, src + 16);
            dst += 32;
            src += 32;
        } while (dst < end);
    } else if (dist >= 8) {
        do {
            store64(dst, load64(src));
            dst += 8;
            src += 8;
        } while (dst < end);
    } else if (dist == 1) {
        uint64_t v = 0x0101010101010101ull * *src;
        for (; dst < end; dst += 8)
            store64(dst, v);
    } else {
        for (; dst < end; dst += dist)
            store64(dst, load64(dst - dist));
    }
}

/* Places the reader at bit `bit` of its span. */
static void bits_seek(bits_t *b, uint64_t bit)
{
    b->p = b->start + bit / 8;
    b->buf = 0;
    b->n = 0;
    b->over = 0;
    if (b->p > b->end) {
        b->over = (size_t)(b->p - b->end);
        b->p = b->end;
    }
    refill(b);
    drop(b, (unsigned)(bit % 8));
}

/* Looks up the entry for the next code in table (primary index bits wide). */
static inline uint32_t lookup(const uint32_t *table, unsigned bits, uint64_t buf)
{
    uint32_t e = table[buf & ((1u << bits) - 1)];
    if (__builtin_expect(e & E_SUB, 0))
        e = table[E_VAL(e) + ((buf >> bits) & ((1u << E_LEN(e)) - 1))];
    return e;
}

/* Reads a dynamic block's header after its 3 type bits into tables (NULL:
 * only checks it). Returns 0, -1 when zlib would refuse it, 1 when the span
 * ended in it. */
static int read_dynamic(bits_t *b, inf_tables *t)
{
    refill(b);
    unsigned nlit = take(b, 5) + 257, ndist = take(b, 5) + 1, nclen = take(b, 4) + 4;
    if (nlit > 286 || ndist > 30)
        return -1;
    uint8_t lens[NUM_LITLEN + NUM_DIST];
    uint8_t clens[19] = {0};
    refill(b);
    for (unsigned i = 0; i < nclen; i++) {
        if (i == 14)
            refill(b);
        clens[clen_order[i]] = (uint8_t)take(b, 3);
    }
    uint32_t ctable[1u << 7];
    unsigned count[MAX_CODE_BITS + 1];
    if (code_check(clens, 19, 0, count) <= 0)
        return -1;
    /* The code-length code has at most 7 bits: one flat table. */
    for (unsigned i = 0; i < 128; i++)
        ctable[i] = E_BAD;
    unsigned code = 0;
    for (unsigned len = 1; len <= 7; len++, code <<= 1)
        for (unsigned s = 0; s < 19; s++)
            if (clens[s] == len) {
                for (unsigned i = reverse_bits(code, len); i < 128; i += 1u << len)
                    ctable[i] = (uint32_t)s << 16 | len;
                code++;
            }
    unsigned total = nlit + ndist;
    for (unsigned i = 0; i < total;) {
        refill(b);
        if (b->over > 8)
            return 1;
        uint32_t e = ctable[b->buf & 127];
        drop(b, E_LEN(e));
        unsigned s = E_VAL(e);
        if (s < 16) {
            lens[i++] = (uint8_t)s;
            continue;
        }
        unsigned rep, val = 0;
        if (s == 16) {
            if (i == 0)
                return -1;
            val = lens[i - 1];
            rep = 3 + take(b, 2);
        } else if (s == 17) {
            rep = 3 + take(b, 3);
        } else {
            rep = 11 + take(b, 7);
        }
        if (i + rep > total)
            return -1;
        memset(lens + i, (int)val, rep);
        i += rep;
    }
    if (past_end(b))
        return 1;
    if (lens[256] == 0)
        return -1;
    if (!t) /* the codes' validity alone: build_table's one test */
        return code_check(lens, nlit, 1, count) < 0 || code_check(lens + nlit, ndist, 1, count) < 0
                   ? -1
                   : 0;
    code_order order;
    if (build_table(t->lit, lens, nlit, LIT_BITS, litlen_entries, 1, &order) < 0 ||
        build_table(t->dist, lens + nlit, ndist, DIST_BITS, dist_entries, 1, NULL) < 0)
        return -1;
    pair_literals(t->lit, &order);
    add_matches(t->lit, t->dist, &order);
    return 0;
}

/* Where one block's body decode left off. */
enum { BODY_EOB = 0, BODY_BAD = -1, BODY_INPUT = 1, BODY_OUTPUT = 2, BODY_PAUSE = 3 };

/* Takes literal entry e's bits from b and writes its one or two literals
 * at element p of out, as bytes (wide 0) or 16-bit symbols (two are always
 * stored: the fast loops have the room). The position after them. */
static inline __attribute__((always_inline)) size_t put_literal(bits_t *b, void *out, size_t p,
                                                                uint32_t e, const int wide)
{
    drop(b, (uint8_t)e);
    if (wide) {
        uint16_t *o16 = out;
        o16[p] = (uint16_t)((e >> 16) & 0xffu);
        o16[p + 1] = (uint16_t)(e >> 24);
    } else {
        uint16_t two = (uint16_t)E_VAL(e);
        memcpy((uint8_t *)out + p, &two, 2);
    }
    return p + 1 + (E_PAIR(e) != 0);
}

/* The body of a Huffman block: symbols until end-of-block, into bytes
 * (wide 0) or 16-bit symbols (wide 1: back-references before out[0] become
 * markers), back-references reaching at most `history` elements before
 * out[0] (a wrapped negative count: after out[-history], a member's start).
 * *pos is the output position in elements. With `step`, it returns
 * BODY_PAUSE after one round of the fast loop (a few literals or one
 * match), so that two streams can take turns (decode_pair). */
static inline __attribute__((always_inline)) int
huff_body(bits_t *bp, const inf_tables *t, void *outv, size_t *pos, size_t cap, size_t history,
          const int wide, const int step)
{
    /* The reader lives in locals meanwhile: the output's stores could
     * otherwise alias it and force it through memory. */
    bits_t local = *bp, *b = &local;
    int r;
    uint8_t *o8 = outv;
    uint16_t *o16 = outv;
    size_t p = *pos;
    const uint32_t *lt = t->lit, *dt = t->dist;
    for (;;) {
        /* The fast loop: at least 8 input bytes and a longest match's room
         * (plus the copies' slack) in the output. After literals the next
         * symbol's primary entry is already looked up (ahead): a refill
         * only adds bits above those it was found with. */
        for (uint32_t e = 0, ahead = 0, rounds = 0; b->end - b->p >= 16 && cap - p >= 258 + 32 + 4;) {
            if (step && rounds++) {
                r = BODY_PAUSE;
                goto out;
            }
            refill_fast(b);
            if (!ahead)
                e = lt[b->buf & LIT_MASK];
            ahead = 0;
            /* Literal entries (one or two literals each) come straight from
             * the primary table, LITS_PER_REFILL of them per refill, which
             * leaves at least LIT_BITS of the 56 bits for the next lookup;
             * a literal-and-length entry waits for the next refill. */
            unsigned len;
            size_t dist;
            if (IS_LITS(e)) {
                p = put_literal(b, outv, p, e, wide);
                e = lt[b->buf & LIT_MASK];
                ahead = 1;
                for (int k = 1; k < LITS_PER_REFILL && IS_LITS(e); k++) {
                    p = put_literal(b, outv, p, e, wide);
                    e = lt[b->buf & LIT_MASK];
                }
                continue;
            }
            if (IS_MATCH(e)) {
                /* a whole match: at most 25 of the 56 bits, which leaves
                 * the next symbol's without a refill */
                len = M_LEN(e);
                dist = dist_base[M_DIST_SYM(e)] + extra_bits(b, E_LEN(e), E_EXTRA(e));
            } else {
                if (e & E_LIT) { /* a literal and a length */
                    if (wide)
                        o16[p] = (uint16_t)((e >> 16) & 0xffu);
                    else
                        o8[p] = (uint8_t)(e >> 16);
                    p++;
                    len = len_base[(e >> 24) & 31] + extra_bits(b, E_LEN(e), e >> 29);
                } else {
                    if (e & E_SUB)
                        e = lt[E_VAL(e) + ((b->buf >> LIT_BITS) & ((1u << E_LEN(e)) - 1))];
                    if (e & E_LIT) {
                        p = put_literal(b, outv, p, e, wide);
                        continue;
                    }
                    if (e & (E_EOB | E_BAD)) {
                        drop(b, E_LEN(e));
                        r = e & E_BAD ? BODY_BAD : BODY_EOB;
                        goto out;
                    }
                    len = E_VAL(e) + extra_bits(b, E_LEN(e), E_EXTRA(e));
                }
                /* At most 20 of the 56 bits are taken: the distance code
                 * is looked up before a refill that adds the bits for its
                 * extra bits, after which 28 are left for the next
                 * symbol's entry, looked up before the copy. */
                uint32_t d = lookup(dt, DIST_BITS, b->buf);
                refill_fast(b);
                if (d & E_BAD) {
                    drop(b, E_LEN(d));
                    r = BODY_BAD;
                    goto out;
                }
                dist = E_VAL(d) + extra_bits(b, E_LEN(d), E_EXTRA(d));
            }
            if (dist > p + history) {
                r = BODY_BAD;
                goto out;
            }
            e = lt[b->buf & LIT_MASK];
            ahead = 1;
            if (wide) {
                uint16_t *dst = o16 + p;
                if (dist <= p) {
                    copy_match((uint8_t *)dst, 2 * dist, 2 * len); /* as bytes */
                } else {
                    for (unsigned i = 0; i < len; i++) {
                        size_t from = p + i - dist + INFLATE_WINDOW; /* in window coordinates */
                        dst[i] = from < INFLATE_WINDOW ? (uint16_t)(INFLATE_MARKER + from)
                                                   : o16[from - INFLATE_WINDOW];
                    }
                }
            } else {
                copy_match(o8 + p, dist, len);
            }
            p += len;
        }
        /* The careful loop: one symbol at a time near either end. */
        refill(b);
        if (b->over > 8) {
            r = BODY_INPUT;
            goto out;
        }
        uint32_t e = lookup(lt, LIT_BITS, b->buf);
        if ((e & E_LIT) && E_PAIR(e)) /* one symbol at a time: the first */
            e = (e & 0xff0000u) | E_LIT | E_EXTRA(e);
        drop(b, E_LEN(e) - E_EXTRA(e));
        unsigned len = 1;
        size_t dist = 0;
        if (IS_MATCH(e)) {
            len = M_LEN(e);
            dist = dist_base[M_DIST_SYM(e)] + take(b, E_EXTRA(e));
            if (dist > p + history) {
                r = BODY_BAD;
                goto out;
            }
        } else if (e & (E_EOB | E_BAD)) {
            r = e & E_BAD ? BODY_BAD : BODY_EOB;
            goto out;
        } else if (!(e & E_LIT)) {
            len = E_VAL(e) + take(b, E_EXTRA(e));
            uint32_t d = lookup(dt, DIST_BITS, b->buf);
            drop(b, E_LEN(d) - E_EXTRA(d));
            if (d & E_BAD) {
                r = BODY_BAD;
                goto out;
            }
            dist = E_VAL(d) + take(b, E_EXTRA(d));
            if (dist > p + history) {
                r = BODY_BAD;
                goto out;
            }
        }
        if (past_end(b)) {
            r = BODY_INPUT;
            goto out;
        }
        if (cap - p < len) {
            r = BODY_OUTPUT;
            goto out;
        }
        for (unsigned i = 0; i < len; i++, p++) {
            if (dist == 0) {
                if (wide)
                    o16[p] = (uint16_t)E_VAL(e);
                else
                    o8[p] = (uint8_t)E_VAL(e);
            } else if (wide) {
                size_t from = p - dist + INFLATE_WINDOW;
                o16[p] = from < INFLATE_WINDOW ? (uint16_t)(INFLATE_MARKER + from)
                                               : o16[from - INFLATE_WINDOW];
            } else {
                o8[p] = o8[(ptrdiff_t)p - (ptrdiff_t)dist];
            }
        }
    }
out:
    *pos = p;
    *bp = local;
    return r;
}

/* Decodes a stored block's bytes after its header bits. */
static int stored_body(bits_t *b, void *out, size_t *pos, size_t cap, int wide)
{
    drop(b, b->n % 8);
    refill(b);
    unsigned len = take(b, 16), nlen = take(b, 16);
    if (len != (~nlen & 0xffffu))
        return BODY_BAD;
    if (past_end(b))
        return BODY_INPUT;
    /* Whole bytes left in the bit buffer come first, then the span. */
    uint64_t at = bit_pos(b) / 8;
    size_t span = (size_t)(b->end - b->start);
    if (at + len > span)
        return BODY_INPUT;
    if (cap - *pos < len)
        return BODY_OUTPUT;
    const uint8_t *src = b->start + at;
    if (len == 0) {
        /* an empty block, as a flush writes: nothing to copy */
    } else if (wide) {
        uint16_t *o = (uint16_t *)out + *pos;
        for (unsigned i = 0; i < len; i++)
            o[i] = src[i];
    } else {
        memcpy((uint8_t *)out + *pos, src, len);
    }
    *pos += len;
    bits_seek(b, (at + len) * 8);
    return BODY_EOB;
}

/* Finds the last marker among the symbols written since the last scan,
 * searching back from the newest four at a time (only the last one matters,
 * and where markers are dense it is among the first looked at), and says
 * whether the last INFLATE_WINDOW symbols hold none. */
static int symbols_clean(inflate_job *j)
{
    const uint16_t *s = j->out;
    uint64_t i = j->out_len, from = j->scanned;
    for (; i - from >= 4; i -= 4) {
        uint64_t w;
        memcpy(&w, s + i - 4, 8);
        if (w & 0x8000800080008000ull)
            break;
    }
    for (; i > from; i--)
        if (s[i - 1] >= INFLATE_MARKER) {
            j->marker_free = i;
            break;
        }
    j->scanned = j->out_len;
    return j->out_len - j->marker_free >= INFLATE_WINDOW;
}

/* A Huffman block body's decoder (huff_body compiled for one output). */
typedef int (*body_fn)(bits_t *b, const inf_tables *t, void *out, size_t *pos, size_t cap,
                       size_t history);

typedef struct stream stream;

/* One variant's compiled bodies: bytes, bytes a round at a time
 * (decode_pair), symbols, and two streams' literals at once. */
typedef struct {
    body_fn bytes, bytes_step, symbols;
    void (*pair)(stream *x, stream *y);
} body_set;

/* One decode in progress (job j), resumable between steps: at a block
 * boundary (t NULL; j->bit and j->out_len describe it) or inside a block
 * whose tables are t, the reader b and the output position pos. */
struct stream {
    inflate_job *j;
    const body_set *bodies; /* the variant's bodies */
    bits_t b;
    const inf_tables *t;
    inf_tables dyn;
    size_t pos;
    size_t history; /* how far back the stream may reach (see huff_body) */
    int final;      /* the block in progress is the last of its member */
    int wide;       /* symbols (1) or bytes (0) */
};

/* One step of a stream inside pair_run, its entry e looked up: up to
 * LITS_PER_REFILL literal entries, or one match whose length and distance
 * the entry holds whole, the next entry then looked up into *e. Returns 0,
 * with nothing taken, at any other symbol (the body's loops take it) or a
 * distance past the stream's history. */
static inline __attribute__((always_inline)) int pair_step(bits_t *b, uint32_t *e,
                                                           const uint32_t *lt, uint8_t *out,
                                                           size_t *pos, size_t history)
{
    uint32_t x = *e;
    size_t p = *pos;
    if (IS_LITS(x)) {
        p = put_literal(b, out, p, x, 0);
        x = lt[b->buf & LIT_MASK];
        for (int k = 1; k < LITS_PER_REFILL && IS_LITS(x); k++) {
            p = put_literal(b, out, p, x, 0);
            x = lt[b->buf & LIT_MASK];
        }
    } else if (IS_MATCH(x)) {
        unsigned len = M_LEN(x), total = E_LEN(x), extra = E_EXTRA(x);
        size_t dist = dist_base[M_DIST_SYM(x)] +
                      (size_t)((b->buf >> (total - extra)) & ((1u << extra) - 1));
        if (dist > p + history)
            return 0;
        drop(b, total);
        x = lt[b->buf & LIT_MASK];
        copy_match(out + p, dist, len);
        p += len;
    } else {
        return 0;
    }
    *e = x;
    *pos = p;
    return 1;
}

/* Both streams by turns, a step of each (pair_step) after one refill of
 * each, while both have a fast loop's room and their next symbols are
 * literals or whole matches: the two lookup chains overlap in the core,
 * which one stream's cannot (each lookup waits for the bits the one
 * before took). */
static inline __attribute__((always_inline)) void pair_run(stream *x, stream *y)
{
    bits_t a = x->b, b = y->b;
    size_t pa = x->pos, pb = y->pos;
    const uint32_t *la = x->t->lit, *lb = y->t->lit;
    uint8_t *oa = x->j->out, *ob = y->j->out;
    const size_t room = 258 + 32 + 4;
    const size_t ca = x->j->out_cap > room ? x->j->out_cap - room : 0;
    const size_t cb = y->j->out_cap > room ? y->j->out_cap - room : 0;
    while (a.end - a.p >= 16 && b.end - b.p >= 16 && pa <= ca && pb <= cb) {
        refill_fast(&a);
        refill_fast(&b);
        uint32_t ea = la[a.buf & LIT_MASK], eb = lb[b.buf & LIT_MASK];
        int ka = pair_step(&a, &ea, la, oa, &pa, x->history);
        int kb = pair_step(&b, &eb, lb, ob, &pb, y->history);
        if (!(ka & kb))
            break;
    }
    x->b = a;
    y->b = b;
    x->pos = pa;
    y->pos = pb;
}

/* Defines a variant's bodies, compiled with ATTRS: NAME_bytes,
 * NAME_bytes_step and NAME_symbols (huff_body for bytes, bytes a round of
 * its fast loop at a time, and 16-bit symbols) and NAME_pair (pair_run). */
#define HUFF_BODIES(NAME, ATTRS)                                                                   \
    ATTRS static int NAME##_bytes(bits_t *b, const inf_tables *t, void *out, size_t *pos,         \
                                  size_t cap, size_t history)                                     \
    {                                                                                              \
        return huff_body(b, t, out, pos, cap, history, 0, 0);                                      \
    }                                                                                              \
    ATTRS static int NAME##_bytes_step(bits_t *b, const inf_tables *t, void *out, size_t *pos,    \
                                       size_t cap, size_t history)                                \
    {                                                                                              \
        return huff_body(b, t, out, pos, cap, history, 0, 1);                                      \
    }                                                                                              \
    ATTRS static int NAME##_symbols(bits_t *b, const inf_tables *t, void *out, size_t *pos,       \
                                    size_t cap, size_t history)                                   \
    {                                                                                              \
        return huff_body(b, t, out, pos, cap, history, 1, 0);                                      \
    }                                                                                              \
    ATTRS static void NAME##_pair(stream *x, stream *y)                                           \
    {                                                                                              \
        pair_run(x, y);                                                                            \
    }

HUFF_BODIES(body, )
#if INFLATE_MULTI
HUFF_BODIES(body_bmi2, INFLATE_ATTR_BMI2)
#endif

/* Each variant's bodies (INFLATE_BASELINE, INFLATE_BMI2). */
static const body_set bodies[] = {
    {body_bytes, body_bytes_step, body_symbols, body_pair},
#if INFLATE_MULTI
    {body_bmi2_bytes, body_bmi2_bytes_step, body_bmi2_symbols, body_bmi2_pair},
#endif
};

/* The widest variant this CPU runs, at most the baseline where
 * GPUBATCH_CPU_SIMD names it (unless `any`). */
static int variant_best(int any)
{
#if INFLATE_MULTI
    if (!(cpu_features() & CPU_BMI2))
        return INFLATE_BASELINE;
    const char *env = any ? NULL : getenv("GPUBATCH_CPU_SIMD");
    return env && !strcmp(env, "baseline") ? INFLATE_BASELINE : INFLATE_BMI2;
#else
    (void)any;
    return INFLATE_BASELINE;
#endif
}

static int variant_level = -1; /* the variant in use; -1: not chosen yet */

/* The variant in use, chosen once (threads that race here pick the same). */
static int variant_in_use(void)
{
    int v = __atomic_load_n(&variant_level, __ATOMIC_ACQUIRE);
    if (v < 0) {
        v = variant_best(0);
        __atomic_store_n(&variant_level, v, __ATOMIC_RELEASE);
    }
    return v;
}

/* Makes v the variant in use, at most the widest this CPU runs (see inflate.h). */
int inflate_force_variant(int v)
{
    int best = variant_best(v < 0 ? 0 : 1);
    if (v < 0 || v > best)
        v = best;
    __atomic_store_n(&variant_level, v, __ATOMIC_RELEASE);
    return v;
}

/* After a final block that ends at j->bit: where the member's trailer and
 * a header that j->member_header accepts follow, whole in the span, records
 * the member's end, places the reader at the next member's first block,
 * sets *history so that no back-reference reaches before that member's
 * start, and returns 1; else returns 0 with nothing changed. */
static int next_member(inflate_job *j, bits_t *b, size_t *history)
{
    if (!j->member_header || j->nends >= j->ends_cap)
        return 0;
    uint64_t at = (j->bit + 7) / 8 + 8; /* past the trailer */
    size_t hlen = at < j->in_len ? j->member_header(j->in + at, j->in_len - (size_t)at) : 0;
    if (!hlen)
        return 0;
    inflate_member_end *e = &j->ends[j->nends++];
    e->end_bit = j->bit;
    e->next_bit = (at + hlen) * 8;
    e->out = j->out_len;
    j->bit = e->next_bit;
    bits_seek(b, j->bit);
    *history = (size_t)0 - j->out_len;
    return 1;
}

#define STEP_MORE 100 /* stream_step: the decode goes on */

/* Starts decoding j's blocks into bytes (wide 0) or symbols (wide 1). */
static void stream_begin(stream *s, inflate_job *j, int wide)
{
    pthread_once(&fixed_once, build_fixed);
    s->j = j;
    s->bodies = &bodies[variant_in_use()];
    s->b = (bits_t){.start = j->in, .end = j->in + j->in_len};
    bits_seek(&s->b, j->bit);
    s->t = NULL;
    s->wide = wide;
    /* how far back the symbols may reach: markers for the unknown window,
       the known history, or none before the last member's start */
    s->history = wide ? INFLATE_WINDOW : j->history;
    if (j->nends)
        s->history = (size_t)0 - j->ends[j->nends - 1].out;
}

/* Ends the block in progress with body result r: takes its output, then
 * the next member or the block callback. STEP_MORE or an inflate result. */
static int stream_block_end(stream *s, int r)
{
    inflate_job *j = s->j;
    s->t = NULL;
    /* Whatever a block read past the span's end met there is not the
     * stream's: the caller has to supply more. */
    if (r != BODY_OUTPUT && past_end(&s->b))
        r = BODY_INPUT;
    if (r == BODY_BAD)
        return INFLATE_ERROR;
    if (r == BODY_INPUT)
        return INFLATE_NEED_INPUT;
    if (r == BODY_OUTPUT)
        return INFLATE_NEED_OUTPUT;
    j->out_len = s->pos;
    j->bit = bit_pos(&s->b);
    j->blocks++;
    if (s->final && !next_member(j, &s->b, &s->history))
        return INFLATE_END;
    if (j->on_block && !s->final)
        j->on_block(j->block_ctx, j->bit, j->out_len);
    return STEP_MORE;
}

/* Advances s: at a boundary, the stop checks and the next block's header;
 * inside a block, its body to the end (step 0) or one round of its fast
 * loop (step 1, bytes only). STEP_MORE or an inflate result. */
static int stream_step(stream *s, int step)
{
    inflate_job *j = s->j;
    if (!s->t) {
        if (j->bit >= j->stop_bit || j->out_len >= j->out_limit)
            return INFLATE_STOP;
        if (s->wide && symbols_clean(j))
            return INFLATE_CLEAN;
        refill(&s->b);
        s->final = (int)take(&s->b, 1);
        unsigned type = take(&s->b, 2);
        s->pos = j->out_len;
        if (type == 0)
            return stream_block_end(s, stored_body(&s->b, j->out, &s->pos, j->out_cap, s->wide));
        if (type == 3)
            return stream_block_end(s, BODY_BAD);
        if (type == 2) {
            int h = read_dynamic(&s->b, &s->dyn);
            if (h != 0)
                return stream_block_end(s, h < 0 ? BODY_BAD : BODY_INPUT);
        }
        s->t = type == 2 ? &s->dyn : &fixed_tables;
    }
    body_fn body = s->wide ? s->bodies->symbols : step ? s->bodies->bytes_step : s->bodies->bytes;
    int r = body(&s->b, s->t, j->out, &s->pos, j->out_cap, s->history);
    return r == BODY_PAUSE ? STEP_MORE : stream_block_end(s, r);
}

/* Runs s until it stops; returns the inflate result. */
static int stream_run(stream *s)
{
    int r;
    while ((r = stream_step(s, 0)) == STEP_MORE)
        ;
    return r;
}

/* The block loop shared by both decoders. */
static int decode(inflate_job *j, int wide)
{
    stream s;
    j->blocks = 0;
    stream_begin(&s, j, wide);
    return stream_run(&s);
}

/* Decodes streams x and y (bytes) by turns, a round of each body's fast
 * loop, and their literals at once (pair_run) where both are inside a
 * block, until x stops. Their results: y's is STEP_MORE where it had not
 * stopped by then (it can go on from there). */
static void decode_pair(stream *x, stream *y, int *rx, int *ry)
{
    *rx = *ry = STEP_MORE;
    while (*rx == STEP_MORE) {
        if (*ry == STEP_MORE && x->t && y->t)
            x->bodies->pair(x, y);
        *rx = stream_step(x, *ry == STEP_MORE);
        if (*ry == STEP_MORE)
            *ry = stream_step(y, 1);
    }
}

/* Data whose literals are most of the stream (float noise) decode faster
 * as two streams at once (decode_pair): a bytes decode whose first
 * PAIR_PROBE bytes came from PAIR_BITS_PER_BYTE bits a byte or more, with
 * PAIR_MIN compressed bytes or more left, is cut at a block start found
 * halfway through the rest. The second half is decoded from there, the
 * bytes of its unknown window as markers until it needs them no more
 * (symbols, as a speculative chunk is), then beside the first half, which
 * must end exactly there; its bytes then follow the first half's, its
 * markers replaced from them. Where any of that does not hold, the decode
 * goes on as one stream from the last boundary reached in order: the
 * result is a one-stream decode's, bit for bit, block callbacks and stops
 * included. */
#define PAIR_PROBE ((size_t)64 << 10)
#define PAIR_BITS_PER_BYTE 7u
#define PAIR_MIN ((size_t)512 << 10)
#define PAIR_SYMBOLS ((size_t)256 << 10) /* the most symbols the second half's window may take */

static atomic_ullong halves_taken; /* decodes whose second half was taken (inflate_halves) */

/* Block boundaries of the second half, counted in its own output. */
typedef struct {
    uint64_t *bit;
    size_t *out;
    size_t n, cap, base;
    int lost; /* a boundary could not be noted (out of memory) */
} pair_marks;

/* inflate_job.on_block of the second half: notes the boundary. */
static void pair_mark(void *ctx, uint64_t bit, size_t out_len)
{
    pair_marks *m = ctx;
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        uint64_t *nb = realloc(m->bit, cap * sizeof *nb);
        if (nb)
            m->bit = nb;
        size_t *no = nb ? realloc(m->out, cap * sizeof *no) : NULL;
        if (!no) {
            m->lost = 1;
            return;
        }
        m->out = no;
        m->cap = cap;
    }
    m->bit[m->n] = bit;
    m->out[m->n++] = m->base + out_len;
}

/* The second half of a decode cut at bit m, its output at byte off of
 * j->out: its window's symbols (nsym of them at off), then its bytes. */
typedef struct {
    inflate_job sym, bytes;
    pair_marks marks;
    size_t nsym, bytes_at;
} pair_half;

/* Decodes the second half's first window as symbols and sets its bytes'
 * decode up after it (h->bytes, its boundaries noted from there on);
 * 0, or -1 where its window's markers do not end within PAIR_SYMBOLS. */
static int half_begin(pair_half *h, const inflate_job *j, uint64_t m, size_t off,
                      size_t limit)
{
    uint8_t *out = j->out;
    h->sym = (inflate_job){.in = j->in, .in_len = j->in_len, .bit = m, .stop_bit = j->stop_bit,
                           .out_limit = SIZE_MAX, .out = out + off, .out_cap = PAIR_SYMBOLS,
                           .on_block = pair_mark, .block_ctx = &h->marks};
    if (decode(&h->sym, 1) != INFLATE_CLEAN || h->marks.lost)
        return -1;
    h->nsym = h->sym.out_len;
    const uint16_t *sym = (const uint16_t *)(out + off);
    uint8_t *window = out + off + 2 * h->nsym;
    for (size_t i = 0; i < INFLATE_WINDOW; i++)
        window[i] = (uint8_t)sym[h->nsym - INFLATE_WINDOW + i];
    h->marks.base = h->nsym;
    h->bytes_at = off + 2 * h->nsym + INFLATE_WINDOW;
    h->bytes = (inflate_job){.in = j->in, .in_len = j->in_len, .bit = h->sym.bit,
                             .stop_bit = j->stop_bit,
                             .out_limit = limit > h->nsym ? limit - h->nsym : 1,
                             .out = out + h->bytes_at, .out_cap = j->out_cap - h->bytes_at,
                             .history = INFLATE_WINDOW, .on_block = pair_mark,
                             .block_ctx = &h->marks};
    return 0;
}

/* Appends the second half's blocks to j, which ended exactly at its start
 * (its markers replaced from j's last bytes): up to the first boundary at
 * j's stop bit or output limit, else its last one. Reports each boundary
 * as j's decode would have. 0, or -1 where nothing could be taken. */
static int half_append(pair_half *h, inflate_job *j, size_t off)
{
    const pair_marks *mk = &h->marks;
    size_t x_len = j->out_len;
    /* the bytes a marker may take: back to the member's start, or the history */
    size_t back = j->nends ? x_len - j->ends[j->nends - 1].out : x_len + j->history;
    if (mk->lost || !mk->n)
        return -1;
    size_t k = 0;
    while (k + 1 < mk->n && x_len + mk->out[k] < j->out_limit && mk->bit[k] < j->stop_bit)
        k++;
    size_t take = mk->out[k], nsym = h->nsym < take ? h->nsym : take;
    uint8_t *out = j->out;
    const uint16_t *sym = (const uint16_t *)(out + off);
    if (inflate_resolve(out + x_len, sym, nsym, out + x_len - INFLATE_WINDOW,
                        back < INFLATE_WINDOW ? back : INFLATE_WINDOW) < 0)
        return -1;
    if (take > h->nsym)
        memmove(out + x_len + h->nsym, out + h->bytes_at, take - h->nsym);
    atomic_fetch_add_explicit(&halves_taken, 1, memory_order_relaxed);
    for (size_t i = 0; i <= k; i++) {
        j->out_len = x_len + mk->out[i];
        j->bit = mk->bit[i];
        j->blocks++;
        if (j->on_block)
            j->on_block(j->block_ctx, j->bit, j->out_len);
    }
    return 0;
}

/* Decodes the rest of j as two halves at once where that pays (see
 * PAIR_PROBE), from s, j's decode stopped at a boundary; else goes on
 * with s. Returns the inflate result. */
static int decode_halves(inflate_job *j, stream *s)
{
    uint64_t end = j->stop_bit < (uint64_t)j->in_len * 8 ? j->stop_bit : (uint64_t)j->in_len * 8;
    if (end <= j->bit || (end - j->bit) / 8 < PAIR_MIN || j->out_len < INFLATE_WINDOW)
        return stream_run(s);
    uint64_t m = inflate_find_block(j->in, j->in_len, j->bit + (end - j->bit) / 2, end);
    if (m == UINT64_MAX)
        return stream_run(s);
    /* Room: the first half's output at the least ratio, a fifth more and
     * 64 KiB, then the second half's symbols, its window and its bytes. */
    size_t first = (size_t)((m - j->bit) / PAIR_BITS_PER_BYTE);
    uintptr_t at = (uintptr_t)j->out; /* the symbols' place aligned in memory */
    size_t off = (size_t)(((at + j->out_len + first + first / 5 + ((size_t)64 << 10) + 63) &
                           ~(uintptr_t)63) - at);
    if (off >= j->out_limit || off > j->out_cap ||
        j->out_cap - off < 2 * PAIR_SYMBOLS + INFLATE_WINDOW + first / 2)
        return stream_run(s);
    pair_half h = {0};
    int r;
    if (half_begin(&h, j, m, off, j->out_limit - j->out_len - first / 2) < 0) {
        r = stream_run(s);
    } else {
        stream y;
        stream_begin(&y, &h.bytes, 0);
        /* the first half: j itself, up to m, in the room before the second */
        uint64_t stop_bit = j->stop_bit;
        size_t cap = j->out_cap;
        j->stop_bit = m;
        j->out_cap = off;
        int rx, ry;
        decode_pair(s, &y, &rx, &ry);
        j->stop_bit = stop_bit;
        j->out_cap = cap;
        int met = rx == INFLATE_STOP && j->out_len < j->out_limit &&
                  inflate_same_start(j->in, j->in_len, j->bit, m);
        if (met && ry == STEP_MORE)
            stream_run(&y);
        if (met || rx == INFLATE_STOP || rx == INFLATE_NEED_OUTPUT) {
            /* on as one stream from the boundary reached in order */
            if (met)
                half_append(&h, j, off);
            int blocks = j->blocks;
            r = decode(j, 0);
            j->blocks += blocks;
        } else {
            r = rx; /* the first half met the end, an error or its input's end */
        }
    }
    free(h.marks.bit);
    free(h.marks.out);
    return r;
}

/* Decodes that took a second half (see inflate.h). */
uint64_t inflate_halves(void)
{
    return atomic_load_explicit(&halves_taken, memory_order_relaxed);
}

/* Decodes blocks into bytes (see inflate.h): one stream, or with
 * j->halves, one for its first PAIR_PROBE bytes, then two at once where
 * that pays (decode_halves). */
int inflate_decode_bytes(inflate_job *j)
{
    if (!j->halves)
        return decode(j, 0);
    stream s;
    j->blocks = 0;
    stream_begin(&s, j, 0);
    uint64_t bit0 = j->bit;
    size_t out0 = j->out_len;
    int r;
    while ((r = stream_step(&s, 0)) == STEP_MORE)
        if (!s.t && j->out_len - out0 >= PAIR_PROBE) {
            if (j->bit - bit0 >= (uint64_t)PAIR_BITS_PER_BYTE * (j->out_len - out0))
                return decode_halves(j, &s);
            return stream_run(&s);
        }
    return r;
}

/* Decodes two jobs into bytes at once (see inflate.h): by turns, their
 * literals together (decode_pair) until the first stops, then the other on
 * its own. */
int inflate_decode_bytes_pair(inflate_job *a, inflate_job *b, int *rb)
{
    stream x, y;
    a->blocks = b->blocks = 0;
    stream_begin(&x, a, 0);
    stream_begin(&y, b, 0);
    int rx, ry;
    decode_pair(&x, &y, &rx, &ry);
    *rb = ry == STEP_MORE ? stream_run(&y) : ry;
    return rx;
}

/* Decodes blocks into symbols with the window unknown (see inflate.h). */
int inflate_decode_symbols(inflate_job *j)
{
    return decode(j, 1);
}

#define RESOLVE_MAPPED 4096 /* symbols from which inflate_resolve maps them through a table */

/* Replaces markers by the window's bytes (see inflate.h). Many symbols go
 * through a table of every symbol's byte (a literal's own, a marker's from
 * the window): one load each, no select, the check of markers before the
 * window's valid bytes a pass of its own, only where some are not valid.
 * Few go without branches: bytes and markers alternate unpredictably. */
int inflate_resolve(uint8_t *dst, const uint16_t *sym, size_t n, const uint8_t *window,
                    size_t valid)
{
    size_t first_valid = INFLATE_WINDOW - valid;
    int bad = 0;
    if (n >= RESOLVE_MAPPED) {
        uint8_t map[INFLATE_MARKER + INFLATE_WINDOW]; /* 256..INFLATE_MARKER unused: no symbol */
        for (unsigned b = 0; b < 256; b++)
            map[b] = (uint8_t)b;
        memcpy(map + INFLATE_MARKER, window, INFLATE_WINDOW);
        for (size_t i = 0; first_valid && i < n; i++) /* a literal wraps past any first_valid */
            bad |= (uint16_t)(sym[i] - INFLATE_MARKER) < first_valid;
        for (size_t i = 0; i < n; i++)
            dst[i] = map[sym[i]];
        return bad ? -1 : 0;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned s = sym[i], w = s & (INFLATE_WINDOW - 1);
        uint8_t m = window[w];
        bad |= (s >= INFLATE_MARKER) & (w < first_valid);
        dst[i] = s < 256 ? (uint8_t)s : m;
    }
    return bad ? -1 : 0;
}

/* Whether the dynamic header at bit `bit` of in[0..len), whose first 17
 * bits w holds, has a complete code-length code, the first thing zlib
 * checks that most offsets fail; 1 where the header's 74 bits are not all
 * in the span (read_dynamic decides). */
static inline int clen_code_complete(const uint8_t *in, size_t len, uint64_t bit, uint64_t w)
{
    uint64_t at = bit + 17;
    if (at / 8 + 8 > len)
        return 1;
    unsigned nclen = (unsigned)((w >> 13) & 15) + 4;
    uint64_t v = (load64(in + at / 8) >> (at % 8)) & ((1ull << (3 * nclen)) - 1);
    unsigned sum = clen_kraft4[v & 0xfff] + clen_kraft4[(v >> 12) & 0xfff] +
                   clen_kraft4[(v >> 24) & 0xfff] + clen_kraft4[(v >> 36) & 0xfff] +
                   clen_kraft4[v >> 48];
    return sum == 128;
}

/* Whether the dynamic block header at bit `bit` of in[0..len), whose type
 * and counts w's low bits pass, has valid, complete codes (its code-length
 * code checked first, which most offsets fail). */
static int dynamic_codes_at(const uint8_t *in, size_t len, uint64_t bit, uint64_t w)
{
    if (!clen_code_complete(in, len, bit, w))
        return 0;
    bits_t b = {.start = in, .end = in + len};
    bits_seek(&b, bit + 3);
    return read_dynamic(&b, NULL) == 0;
}

/* Whether a non-final block that zlib would take could start at bit `bit`
 * of in[0..len), whose next bits (at least 17, zeros past the span) w holds
 * from its low end: a dynamic header with valid, complete codes, or a stored
 * block with matching LEN/NLEN. */
static int block_starts_at(const uint8_t *in, size_t len, uint64_t bit, uint64_t w)
{
    unsigned head = (unsigned)(w & 7);
    if (head == 4) { /* BFINAL 0, BTYPE 2: dynamic */
        unsigned nlit = (w >> 3) & 31, ndist = (w >> 8) & 31;
        return nlit <= 29 && ndist <= 29 && dynamic_codes_at(in, len, bit, w);
    }
    if (head == 0) { /* BFINAL 0, BTYPE 0: stored */
        uint64_t lenbyte = (bit + 3 + 7) / 8;
        if (lenbyte + 4 > len)
            return 0;
        const uint8_t *q = in + lenbyte;
        return (q[0] ^ q[2]) == 0xff && (q[1] ^ q[3]) == 0xff;
    }
    return 0;
}

/* Bits [s, s + 64) of the 128 bits w0 then w1, first bit lowest (0 < s < 64). */
static inline uint64_t bits_from(uint64_t w0, uint64_t w1, unsigned s)
{
    return w0 >> s | w1 << (64 - s);
}

/* Bit 8i + 7 set where byte i of v is zero, exactly (no borrow between bytes). */
static inline uint64_t zero_bytes(uint64_t v)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    return ~(((v & low7) + low7) | v) & ~low7;
}

/* The 64 offsets from byte g of in (whose bytes g .. g + 16 must be in the
 * span) at which a non-final block could start by its first bits, bit k
 * for offset 8g + k: a dynamic header's type and counts (HLIT and HDIST at
 * most 29: not their four high bits all set), or a stored block's type and
 * LEN/NLEN, which lie one byte on from offsets 0..5 of a byte and two from
 * 6 and 7. *stored gets the stored ones. All from a few loads and shifts,
 * with no branch: where a quarter of all offsets pass the type alone, a
 * test per byte mispredicts too often. */
static inline uint64_t group_candidates(const uint8_t *in, size_t g, uint64_t *stored)
{
    uint64_t w0 = load64(in + g), w1 = load64(in + g + 8);
    uint64_t x1 = bits_from(w0, w1, 1), x2 = bits_from(w0, w1, 2);
    uint64_t hlit_high = bits_from(w0, w1, 4) & bits_from(w0, w1, 5) & bits_from(w0, w1, 6) &
                         bits_from(w0, w1, 7);
    uint64_t hdist_high = bits_from(w0, w1, 9) & bits_from(w0, w1, 10) & bits_from(w0, w1, 11) &
                          bits_from(w0, w1, 12);
    uint64_t dyn = ~w0 & ~x1 & x2 & ~hlit_high & ~hdist_high;
    /* byte i of ok's bit 8i: LEN and NLEN complement each other at byte
     * g + 1 + i (both of their bytes' XORs 0xff); last: at byte g + 9 */
    uint64_t a = load64(in + g + 1) ^ load64(in + g + 3), b = load64(in + g + 2) ^ load64(in + g + 4);
    uint64_t ok = zero_bytes(~(a & b)) >> 7;
    uint64_t last = (uint64_t)((in[g + 9] ^ in[g + 11]) == 0xff && (in[g + 10] ^ in[g + 12]) == 0xff)
                    << 56;
    uint64_t len_ok = ok * 0x3f | ((ok >> 8) | last) * 0xc0;
    *stored = ~w0 & ~x1 & ~x2 & len_ok;
    return dyn | *stored;
}

/* The first candidate block start in [from, to) (see inflate.h): the
 * offsets that group_candidates passes, 64 at a time, then each one's
 * code-length code and codes; the last 16 bytes' offsets one by one. */
uint64_t inflate_find_block(const uint8_t *in, size_t len, uint64_t from, uint64_t to)
{
    pthread_once(&fixed_once, build_fixed);
    uint64_t limit = (uint64_t)len * 8;
    uint64_t bit = from;
    if (to > limit)
        to = limit;
    while (bit < to && bit / 8 + 16 <= len) {
        size_t g = (size_t)(bit / 8);
        uint64_t stored, cand = group_candidates(in, g, &stored) & (~0ull << (bit % 8));
        if (to - (uint64_t)g * 8 < 64)
            cand &= (1ull << (to - (uint64_t)g * 8)) - 1;
        for (; cand; cand &= cand - 1) {
            unsigned k = (unsigned)__builtin_ctzll(cand);
            uint64_t at = (uint64_t)g * 8 + k;
            if (stored >> k & 1 || dynamic_codes_at(in, len, at, load64(in + at / 8) >> (at % 8)))
                return at; /* a stored block's checks are all above */
        }
        bit = (uint64_t)(g + 8) * 8;
    }
    for (; bit < to && bit + 3 <= limit; bit++) {
        size_t byte = (size_t)(bit / 8);
        uint64_t w = 0;
        memcpy(&w, in + byte, len - byte < 8 ? len - byte : 8);
        if (block_starts_at(in, len, bit, w >> bit % 8))
            return bit;
    }
    return UINT64_MAX;
}

#define EMPTY_FIXED_BITS 10 /* a fixed-Huffman block holding only its end code */
#define EMPTY_FIXED 2u       /* its bits from the first: BFINAL 0, BTYPE 01, code 0000000 */

/* The EMPTY_FIXED_BITS bits of in[0..len) from bit `bit`, first bit lowest;
 * where they pass the end, a value no empty block has. */
static unsigned empty_fixed_at(const uint8_t *in, size_t len, uint64_t bit)
{
    size_t byte = (size_t)(bit / 8);
    if ((bit + EMPTY_FIXED_BITS + 7) / 8 > len)
        return ~0u;
    unsigned v = in[byte] | (unsigned)(byte + 1 < len ? in[byte + 1] : 0) << 8;
    return v >> bit % 8 & ((1u << EMPTY_FIXED_BITS) - 1);
}

/* Whether a decode ending at `end` continues as one starting at `start`
 * (see inflate.h). Empty fixed blocks (zlib's partial flush and pigz write
 * them, to align the next block) add nothing, and the finder does not look
 * for fixed blocks: a start past a run of them is the same start. */
int inflate_same_start(const uint8_t *in, size_t len, uint64_t end, uint64_t start)
{
    while (end < start && empty_fixed_at(in, len, end) == EMPTY_FIXED)
        end += EMPTY_FIXED_BITS;
    if (end == start)
        return 1;
    if (end / 8 >= len || start / 8 >= len)
        return 0;
    unsigned head_end = (unsigned)(in[end / 8] >> (end % 8)),
             head_start = (unsigned)(in[start / 8] >> (start % 8));
    if (end % 8 > 5)
        head_end |= (unsigned)(end / 8 + 1 < len ? in[end / 8 + 1] : 0) << (8 - end % 8);
    if (start % 8 > 5)
        head_start |= (unsigned)(start / 8 + 1 < len ? in[start / 8 + 1] : 0) << (8 - start % 8);
    return (head_end & 7) == 0 && (head_start & 7) == 0 && (end + 3 + 7) / 8 == (start + 3 + 7) / 8;
}
