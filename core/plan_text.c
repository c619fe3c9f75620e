// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The wait-plan and wait-band text grammars (see plan_text.h).
 *
 * A recursive-descent parser over a NUL-terminated text. Keys are matched
 * as fixed literals in their one allowed order, so a missing, misplaced or
 * repeated key is refused at the first byte where the expected key is not,
 * and every refusal names the byte offset and the first thing wrong.
 * Numbers refuse leading zeros, which makes every accepted text its own
 * label: parse -> label gives the text back byte for byte.
 */
#include "plan_text.h"
#include "plan.h"
#include "textbuf.h"

/* Largest microsecond count whose nanoseconds fit in a u64. */
#define US_MAX_IN_NS (GPUAR_U64_MAX / GPUAR_NSEC_PER_USEC)
#define NO_PARK_KIND "expected a park kind ('block', 'poll' or 'flag')"
/* Bytes of an offending word quoted back in a refusal. */
#define QUOTE_MAX 32

struct parser {
	const char *text;
	size_t pos;
	bool in_bands;			/* ';' ends a plan */
	struct gpuar_parse_error *err;	/* never NULL */
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static char cur(const struct parser *p)
{
	return p->text[p->pos];
}

static bool at_plan_end(const struct parser *p)
{
	return cur(p) == '\0' || (p->in_bands && cur(p) == ';');
}

static void refusal_begin(struct parser *p, size_t at, struct gpuar_textbuf *tb)
{
	p->err->offset = at > 0xffffffffU ? 0xffffffffU : (u32)at;
	gpuar_textbuf_init(tb, p->err->what, sizeof(p->err->what));
}

static int refusal_end(struct gpuar_textbuf *tb)
{
	gpuar_textbuf_finish(tb);
	return -1;
}

static int refuse(struct parser *p, size_t at, const char *what)
{
	struct gpuar_textbuf tb;

	refusal_begin(p, at, &tb);
	gpuar_textbuf_puts(&tb, what);
	return refusal_end(&tb);
}

/* Quote @n bytes of the text, shortened and with unprintables masked. */
static void put_quoted(struct gpuar_textbuf *tb, const char *s, size_t n)
{
	size_t i;

	gpuar_textbuf_putc(tb, '\'');
	for (i = 0; i < n && i < QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)s[i];

		gpuar_textbuf_putc(tb, c >= 0x20 && c < 0x7f ? (char)c : '?');
	}
	if (n > QUOTE_MAX)
		gpuar_textbuf_puts(tb, "...");
	gpuar_textbuf_putc(tb, '\'');
}

static bool take(struct parser *p, const char *lit)
{
	size_t n = 0;

	while (lit[n]) {
		if (p->text[p->pos + n] != lit[n])
			return false;
		n++;
	}
	p->pos += n;
	return true;
}

static int expect(struct parser *p, const char *lit)
{
	struct gpuar_textbuf tb;

	if (take(p, lit))
		return 0;
	refusal_begin(p, p->pos, &tb);
	gpuar_textbuf_puts(&tb, at_plan_end(p) ? "missing '" : "expected '");
	gpuar_textbuf_puts(&tb, lit);
	gpuar_textbuf_putc(&tb, '\'');
	return refusal_end(&tb);
}

/*
 * "<key>=" at the cursor, after @sep unless @sep is '\0'. Refused as
 * "expected '<sep><key>='", or where the plan has ended, "missing
 * '<sep><key>='": the refusal names the key that is not there.
 */
static int expect_key_after(struct parser *p, char sep, const char *key)
{
	struct gpuar_textbuf tb;
	size_t start = p->pos;

	if (sep && cur(p) == sep)
		p->pos++;
	if ((!sep || p->pos > start) && take(p, key) && take(p, "="))
		return 0;
	p->pos = start;
	refusal_begin(p, start, &tb);
	gpuar_textbuf_puts(&tb, at_plan_end(p) ? "missing '" : "expected '");
	if (sep)
		gpuar_textbuf_putc(&tb, sep);
	gpuar_textbuf_puts(&tb, key);
	gpuar_textbuf_puts(&tb, "='");
	return refusal_end(&tb);
}

/* Unsigned decimal, no sign, no leading zero; @what names the value. */
static int parse_number(struct parser *p, const char *what, u64 *out)
{
	struct gpuar_textbuf tb;
	size_t start = p->pos;
	u64 value = 0;

	if (!is_digit(cur(p))) {
		refusal_begin(p, start, &tb);
		gpuar_textbuf_puts(&tb, "expected a number for ");
		gpuar_textbuf_puts(&tb, what);
		return refusal_end(&tb);
	}
	if (cur(p) == '0' && is_digit(p->text[start + 1]))
		return refuse(p, start, "leading zero in number");
	while (is_digit(cur(p))) {
		u64 digit = (u64)(cur(p) - '0');

		if (value > (GPUAR_U64_MAX - digit) / 10)
			return refuse(p, start, "number overflows");
		value = value * 10 + digit;
		p->pos++;
	}
	*out = value;
	return 0;
}

/*
 * "<sep><key>=<n>" in microseconds, stored in nanoseconds, at most
 * @max_ns.
 */
static int parse_us(struct parser *p, char sep, const char *key, u64 max_ns,
		    u64 *ns)
{
	struct gpuar_textbuf tb;
	size_t at;
	u64 us;

	if (expect_key_after(p, sep, key))
		return -1;
	at = p->pos;
	if (parse_number(p, key, &us))
		return -1;
	if (us > US_MAX_IN_NS || us * GPUAR_NSEC_PER_USEC > max_ns) {
		bool overflows = us > US_MAX_IN_NS;

		refusal_begin(p, at, &tb);
		gpuar_textbuf_puts(&tb, key);
		gpuar_textbuf_putc(&tb, ' ');
		gpuar_textbuf_u64(&tb, us);
		gpuar_textbuf_puts(&tb, overflows ? " overflows in ns (max " :
						    " out of range (max ");
		gpuar_textbuf_u64(&tb, overflows ? US_MAX_IN_NS :
				  max_ns / GPUAR_NSEC_PER_USEC);
		gpuar_textbuf_putc(&tb, ')');
		return refusal_end(&tb);
	}
	*ns = us * GPUAR_NSEC_PER_USEC;
	return 0;
}

static int parse_window(struct parser *p, u32 *window)
{
	struct gpuar_textbuf tb;
	size_t at;
	u64 n;

	if (expect_key_after(p, ',', "window"))
		return -1;
	at = p->pos;
	if (parse_number(p, "window", &n))
		return -1;
	if (n < GPUAR_PLAN_WINDOW_MIN || n > GPUAR_PLAN_WINDOW_MAX) {
		refusal_begin(p, at, &tb);
		gpuar_textbuf_puts(&tb, "window ");
		gpuar_textbuf_u64(&tb, n);
		gpuar_textbuf_puts(&tb, " out of range 1..16");
		return refusal_end(&tb);
	}
	*window = (u32)n;
	return 0;
}

/* A park kind is a word: letters, digits, '_' and '-'. */
static bool in_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       is_digit(c) || c == '_' || c == '-';
}

static bool word_is(const char *word, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (name[i] != word[i])
			return false;
	return name[n] == '\0';
}

static int parse_park(struct parser *p, struct gpuar_plan *plan)
{
	const char *word = p->text + p->pos;
	struct gpuar_textbuf tb;
	size_t n = 0;

	while (in_word(word[n]))
		n++;
	if (word_is(word, n, "block"))
		plan->park = GPUAR_PARK_BLOCK;
	else if (word_is(word, n, "poll"))
		plan->park = GPUAR_PARK_POLL;
	else if (word_is(word, n, "flag"))
		plan->park = GPUAR_PARK_FLAG;
	if (!plan->park && !n)
		return refuse(p, p->pos, NO_PARK_KIND);
	if (!plan->park) {
		refusal_begin(p, p->pos, &tb);
		gpuar_textbuf_puts(&tb, "unknown park kind ");
		put_quoted(&tb, word, n);
		return refusal_end(&tb);
	}
	p->pos += n;
	if (plan->park != GPUAR_PARK_FLAG) {
		if (cur(p) == ':')
			return refuse(p, p->pos,
				      plan->park == GPUAR_PARK_BLOCK ?
				      "block takes no parameters" :
				      "poll takes no parameters");
		return 0;
	}
	if (parse_us(p, ':', "park_us", GPUAR_PLAN_PARK_NS_MAX, &plan->park_ns) ||
	    parse_us(p, ',', "backstop_us", GPUAR_PLAN_BACKSTOP_NS_MAX,
		     &plan->backstop_ns))
		return -1;
	return 0;
}

static int parse_predict(struct parser *p, struct gpuar_plan *plan)
{
	if (plan->park == GPUAR_PARK_BLOCK)
		return refuse(p, p->pos, "block takes no prediction");
	p->pos++;	/* the '+' */
	if (expect(p, "predict:") ||
	    parse_us(p, '\0', "margin_us", GPUAR_PLAN_SLEEP_NS_MAX, &plan->margin_ns) ||
	    parse_us(p, ',', "min_sleep_us", GPUAR_PLAN_SLEEP_NS_MAX, &plan->min_sleep_ns) ||
	    parse_us(p, ',', "max_sleep_us", GPUAR_PLAN_SLEEP_NS_MAX, &plan->max_sleep_ns) ||
	    parse_window(p, &plan->window))
		return -1;
	plan->flags |= GPUAR_PLAN_PREDICT;
	return 0;
}

static int parse_plan_at(struct parser *p, struct gpuar_plan *out)
{
	struct gpuar_plan plan = { 0 };
	size_t start = p->pos;
	enum gpuar_plan_fault fault;

	if (parse_park(p, &plan))
		return -1;
	if (cur(p) == '+' && parse_predict(p, &plan))
		return -1;
	if (!at_plan_end(p))
		return refuse(p, p->pos, "trailing text");
	/* The grammar's bounds are the binary check's; keep them so. */
	fault = gpuar_plan_check(&plan);
	if (fault != GPUAR_PLAN_OK)
		return refuse(p, start, gpuar_plan_fault_str(fault));
	*out = plan;
	return 0;
}

int gpuar_plan_parse(const char *text, struct gpuar_plan *plan,
		     struct gpuar_parse_error *err)
{
	struct gpuar_parse_error scratch;
	struct parser p = {
		.text = text, .pos = 0, .in_bands = false,
		.err = err ? err : &scratch,
	};
	struct gpuar_plan parsed;

	if (!text)
		return refuse(&p, 0, "no text");
	if (parse_plan_at(&p, &parsed))
		return -1;
	*plan = parsed;
	return 0;
}

/* Edges rise strictly; the first band's edge is 0 and is not written. */
static int refuse_edge(struct parser *p, size_t at, u64 edge, u64 previous,
		       u32 bands_so_far)
{
	struct gpuar_textbuf tb;

	refusal_begin(p, at, &tb);
	gpuar_textbuf_puts(&tb, "edge ");
	gpuar_textbuf_u64(&tb, edge);
	if (bands_so_far == 1) {
		gpuar_textbuf_puts(&tb, " not above 0, where the first band");
		gpuar_textbuf_puts(&tb, " starts");
	} else {
		gpuar_textbuf_puts(&tb, " not above the previous edge ");
		gpuar_textbuf_u64(&tb, previous);
	}
	return refusal_end(&tb);
}

int gpuar_bands_parse(const char *text, struct gpuar_bands *bands,
		      struct gpuar_parse_error *err)
{
	struct gpuar_parse_error scratch;
	struct parser p = {
		.text = text, .pos = 0, .in_bands = true,
		.err = err ? err : &scratch,
	};
	struct gpuar_bands parsed = { 0 };
	u64 edge = 0, next;
	size_t at;

	if (!text)
		return refuse(&p, 0, "no text");
	for (;;) {
		parsed.from_rows[parsed.count] = edge;
		if (parse_plan_at(&p, &parsed.plan[parsed.count]))
			return -1;
		parsed.count++;
		if (cur(&p) == '\0')
			break;
		if (parsed.count == GPUAR_BANDS_MAX)
			return refuse(&p, p.pos, "more than 4 bands");
		p.pos++;	/* the ';' */
		if (expect(&p, "rows>="))
			return -1;
		at = p.pos;
		if (parse_number(&p, "the band edge", &next))
			return -1;
		if (next <= edge)
			return refuse_edge(&p, at, next, edge, parsed.count);
		edge = next;
		if (expect(&p, ":"))
			return -1;
	}
	*bands = parsed;
	return 0;
}

/* Nanoseconds as microseconds; a fraction only when the ns are not whole us. */
static void put_us(struct gpuar_textbuf *tb, u64 ns)
{
	u64 frac = ns % GPUAR_NSEC_PER_USEC;
	u64 scale = 100;

	gpuar_textbuf_u64(tb, ns / GPUAR_NSEC_PER_USEC);
	if (!frac)
		return;
	gpuar_textbuf_putc(tb, '.');
	while (frac) {
		gpuar_textbuf_putc(tb, (char)('0' + frac / scale));
		frac %= scale;
		scale /= 10;
	}
}

static void put_field(struct gpuar_textbuf *tb, const char *key, u64 ns)
{
	gpuar_textbuf_puts(tb, key);
	put_us(tb, ns);
}

static void write_plan(struct gpuar_textbuf *tb, const struct gpuar_plan *plan)
{
	enum gpuar_plan_fault fault = gpuar_plan_check(plan);

	if (fault != GPUAR_PLAN_OK) {
		/* Not a plan the grammar can express; say why instead. */
		gpuar_textbuf_puts(tb, "invalid(");
		gpuar_textbuf_puts(tb, gpuar_plan_fault_str(fault));
		gpuar_textbuf_putc(tb, ')');
		return;
	}
	switch (plan->park) {
	case GPUAR_PARK_BLOCK:
		gpuar_textbuf_puts(tb, "block");
		break;
	case GPUAR_PARK_POLL:
		gpuar_textbuf_puts(tb, "poll");
		break;
	default:
		put_field(tb, "flag:park_us=", plan->park_ns);
		put_field(tb, ",backstop_us=", plan->backstop_ns);
		break;
	}
	if (!gpuar_plan_predicts(plan))
		return;
	put_field(tb, "+predict:margin_us=", plan->margin_ns);
	put_field(tb, ",min_sleep_us=", plan->min_sleep_ns);
	put_field(tb, ",max_sleep_us=", plan->max_sleep_ns);
	gpuar_textbuf_puts(tb, ",window=");
	gpuar_textbuf_u64(tb, plan->window);
}

size_t gpuar_plan_label(const struct gpuar_plan *plan, char *buf, size_t size)
{
	struct gpuar_textbuf tb;

	gpuar_textbuf_init(&tb, buf, size);
	write_plan(&tb, plan);
	return gpuar_textbuf_finish(&tb);
}

size_t gpuar_bands_label(const struct gpuar_bands *bands, char *buf,
			 size_t size)
{
	struct gpuar_textbuf tb;
	u32 i;

	gpuar_textbuf_init(&tb, buf, size);
	if (!bands->count || bands->count > GPUAR_BANDS_MAX) {
		gpuar_textbuf_puts(&tb, "invalid(band count)");
		return gpuar_textbuf_finish(&tb);
	}
	for (i = 0; i < bands->count; i++) {
		if (i) {
			gpuar_textbuf_puts(&tb, ";rows>=");
			gpuar_textbuf_u64(&tb, bands->from_rows[i]);
			gpuar_textbuf_putc(&tb, ':');
		}
		write_plan(&tb, &bands->plan[i]);
	}
	return gpuar_textbuf_finish(&tb);
}

const struct gpuar_plan *gpuar_bands_select(const struct gpuar_bands *bands,
					    u64 rows)
{
	u32 i;

	if (!bands->count || bands->count > GPUAR_BANDS_MAX)
		return NULL;
	for (i = bands->count - 1; i > 0; i--)
		if (rows >= bands->from_rows[i])
			break;
	return &bands->plan[i];
}
