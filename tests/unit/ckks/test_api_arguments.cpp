// No standard-library exception escapes the eager CKKS API (issue 26): a few hundred random draws per API of
// out-of-range and odd arguments (levels -5 .. max + 5 and the int extremes, slot counts that are not powers of
// two or beyond N/2, scales and constants that are zero, negative, subnormal, NaN, infinite or huge, rotation steps
// up to INT64_MIN, empty and moved-from operands, ciphertexts whose parts were taken away). Each call must either
// succeed or throw a cerium::Error subclass whose message is non-empty and names the call; anything else fails
// naming the call and its arguments. The seed is printed (CERIUM_TEST_SEED reproduces a run).
//
// Regression cases (the last test case): Ciphertext::part threw std::out_of_range from its .at() (a ciphertext whose
// parts() were taken away, or an index past them); a plaintext after take_poly() kept its context and decode read
// the missing polynomial (a segmentation fault); a ciphertext made with 0 slots divided by zero when rotated, and a
// PeriodicPlaintext with gap 0 in expand(); messages that named the Plaintext constructor, round_to_residues, add or
// adjust_scale, rescale or relinearize_rescale instead of the user's call (encode at a scale below 1, multiply or
// sub by a huge constant, add of operands whose scales cannot meet, multiply_plain_rescale_sum at level 0).

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <typeinfo>
#include <utility>
#include <vector>

#include "cerium/core/error.hpp"
#include "evaluator_test_support.hpp"
#include "support/api_arguments.hpp"
#include "support/catch.hpp"
#include "support/misuse.hpp"
#include "support/random.hpp"

using namespace evaluator_test;
using cerium_test::pick;

using namespace cerium_test;

namespace {

// Levels: anything from -5 to max + 5, sometimes the int extremes.
int draw_level(std::mt19937_64& rng, int max_level) {
  if (rng() % 8 == 0) return pick<int>(rng, {int_min, int_max, int_min + 1, int_max - 1});
  return -5 + static_cast<int>(rng() % static_cast<std::uint64_t>(max_level + 11));
}

// Slot counts: valid powers of two, 0 (N/2), odd and even non-powers of two, beyond N/2, absurd.
std::size_t draw_slots(std::mt19937_64& rng, std::size_t max_slots) {
  const std::size_t power = std::size_t{1} << (rng() % 10);
  return pick<std::size_t>(
      rng, {0, 1, 2, 3, 5, 6, 7, 12, 24, power, power, max_slots - 1, max_slots, max_slots + 1, 2 * max_slots,
            1 + rng() % (4 * max_slots), std::size_t{1} << 40, std::numeric_limits<std::size_t>::max()});
}

// Scales and constants: ordinary, zero, negative, subnormal, tiny, NaN, infinite, huge.
double draw_double(std::mt19937_64& rng, double ordinary) {
  constexpr double largest = std::numeric_limits<double>::max(), subnormal = std::numeric_limits<double>::denorm_min();
  return pick<double>(rng, {ordinary, ordinary, 0.0, -0.0, -1.0, -ordinary, 0.5, 1.0, 2.0, subnormal, 1e-300,
                            not_a_number, -not_a_number, infinity, -infinity, 0x1p40, 0x1p80, 1e300, largest,
                            -largest});
}

// Rotation steps of any size and sign.
std::int64_t draw_steps(std::mt19937_64& rng) {
  return pick<std::int64_t>(
      rng, {0, 1, -1, 5, -5, 300, 512, -512, 1024, 511, i64_min, i64_max, i64_min + 1, static_cast<std::int64_t>(rng()),
            -static_cast<std::int64_t>(rng() % 100000), static_cast<std::int64_t>(rng() % 100000)});
}

// Integers for multiply_integer.
std::int64_t draw_integer(std::mt19937_64& rng) {
  return pick<std::int64_t>(
      rng, {0, 1, -1, 2, 3, i64_min, i64_max, i64_min + 1, std::int64_t{1} << 62, -(std::int64_t{1} << 62),
            static_cast<std::int64_t>(rng()), (std::int64_t{1} << 31) - 1, -(std::int64_t{1} << 31)});
}

// Values: mostly in [-1, 1], sometimes one that is not finite or huge.
Values draw_values(std::mt19937_64& rng, std::size_t count) {
  Values v = random_complex(rng, count);
  if (count > 0 && rng() % 6 == 0) {
    v[rng() % count] = {pick<double>(rng, {not_a_number, infinity, -infinity, 1e300, 1e30, 0x1p60}), 0.0};
  }
  return v;
}

// The toy fixtures: f with relinearization, rotations 1, -1, 5 and 300 and conjugation; g another context.
struct Fixtures {
  Fixture f{toy(10, 3, 1, 1), {.relinearization = true, .rotations = {1, -1, 5, 300}, .conjugation = true}};
  Fixture g{toy(11, 2, 1, 1), {.relinearization = false}};
};

Fixtures& fixtures() {
  static Fixtures fx;
  return fx;
}

// A pool of ciphertext operands: ordinary ones at every level, sparse, 3-part, with a product's scale, empty,
// moved-from, of another context, and ones whose parts were taken away (Ciphertext::parts() is mutable).
struct Operands {
  std::vector<Ciphertext> cts;
  std::vector<std::string> names;
  std::vector<Plaintext> pts;
  std::vector<std::string> pt_names;

  void add(std::string name, Ciphertext ct) {
    names.push_back(std::move(name));
    cts.push_back(std::move(ct));
  }
  void add(std::string name, Plaintext pt) {
    pt_names.push_back(std::move(name));
    pts.push_back(std::move(pt));
  }
};

Operands make_operands(std::mt19937_64& rng) {
  const Fixture& f = fixtures().f;
  const Fixture& g = fixtures().g;
  Operands o;
  const Values x = random_complex(rng, 8);
  for (int level = 0; level <= f.context->max_level(); ++level)
    o.add("level " + std::to_string(level), f.encrypt(x, level));
  o.add("8 slots", f.encrypt(x, -1, 8));
  o.add("8 slots at level 1", f.encrypt(x, 1, 8));
  o.add("1 slot", f.encrypt(Values{x[0]}, -1, 1));
  o.add("3 parts", f.evaluator.multiply_no_relin(f.encrypt(x), f.encrypt(x)));
  o.add("a product's scale", f.evaluator.multiply(f.encrypt(x), f.encrypt(x)));
  o.add("scale 2^10", f.encrypt(x, -1, 0, 0x1p10));
  o.add("empty", Ciphertext{});
  {
    Ciphertext source = f.encrypt(x);
    Ciphertext taken = std::move(source);
    o.add("moved-from", std::move(source));
  }
  o.add("another context's", g.encrypt(x));
  {
    Ciphertext no_parts = f.encrypt(x);
    no_parts.parts().clear();
    o.add("no parts", std::move(no_parts));
    Ciphertext one_part = f.encrypt(x);
    one_part.parts().pop_back();
    o.add("one part", std::move(one_part));
  }
  for (int level = 0; level <= f.context->max_level(); ++level)
    o.add("level " + std::to_string(level), f.encoder.encode(x, {.level = level}));
  o.add("8 slots", f.encoder.encode(x, {.slots = 8}));
  o.add("scale 1", f.encoder.encode(Values{{1, 0}}, {.scale = 1.0}));
  o.add("empty", Plaintext{});
  {
    Plaintext source = f.encoder.encode(x);
    Plaintext taken = std::move(source);
    o.add("moved-from", std::move(source));
  }
  {
    Plaintext poly_taken = f.encoder.encode(x);
    (void)std::move(poly_taken).take_poly();
    o.add("without its polynomial", std::move(poly_taken));
  }
  o.add("another context's", g.encoder.encode(x));
  return o;
}

}  // namespace

TEST_CASE("encoder: random out-of-range arguments throw cerium::Errors only", "[ckks][api_arguments]") {
  auto rng = cerium_test::make_rng(2601);
  INFO("seed " << cerium_test::test_seed());
  const Fixture& f = fixtures().f;
  const Encoder& encoder = f.encoder;
  const int max_level = f.context->max_level();
  const std::size_t max_slots = f.max_slots();
  Tally tally;
  for (int draw = 0; draw < 300; ++draw) {
    // Each argument odd about one time in three, so that some calls succeed.
    const auto odd = [&] { return rng() % 3 == 0; };
    const int level = odd() ? draw_level(rng, max_level) : pick<int>(rng, {-1, 0, 1, max_level});
    const std::size_t slots = odd() ? draw_slots(rng, max_slots) : std::size_t{1} << (rng() % 10);
    const double scale = odd() ? draw_double(rng, 0x1p28) : pick<double>(rng, {0.0, 0x1p20, 0x1p28});
    const std::size_t bound = std::min<std::size_t>(slots == 0 ? max_slots : slots, 2 * max_slots);
    const std::size_t count =
        odd() ? pick<std::size_t>(rng, {0, bound + 1, bound + 7, 2 * max_slots}) : rng() % (bound + 1);
    const Values values = odd() ? draw_values(rng, count) : random_complex(rng, count);
    const EncodeOptions options{.level = level, .scale = scale, .slots = slots};
    const std::string args = "(" + std::to_string(count) + " values, level " + std::to_string(level) + ", scale " +
                             show(scale) + ", slots " + std::to_string(slots) + ")";

    Plaintext pt;
    if (attempt(tally, "encode" + args, "encode", [&] { pt = encoder.encode(values, options); })) {
      CHECK(pt.level() == (level == -1 ? max_level : level));
      std::vector<Complex> decoded;
      if (attempt(tally, "decode(encode" + args + ")", "decode", [&] { decoded = encoder.decode(pt); })) {
        // Decoding never returns NaN or infinity silently.
        for (const Complex& z : decoded) {
          INFO("decode(encode" << args << ")");
          REQUIRE(std::isfinite(z.real()));
          REQUIRE(std::isfinite(z.imag()));
        }
      }
    }
    std::vector<double> reals(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) reals[i] = values[i].real();
    attempt(tally, "encode(doubles)" + args, "encode", [&] { (void)encoder.encode(reals, options); });
    attempt(tally, "encode_extended" + args, "encode_extended",
            [&] { (void)encoder.encode_extended(values, options); });
    const Complex constant = count > 0 ? values[0] : Complex(draw_double(rng, 0.5), draw_double(rng, 0.25));
    attempt(tally, "encode_constant(" + show(constant.real()) + " + " + show(constant.imag()) + "i" + args + ")",
            "encode_constant", [&] { (void)encoder.encode_constant(constant, options); });
    attempt(tally, "encode_constant(real " + show(constant.real()) + args + ")", "encode_constant",
            [&] { (void)encoder.encode_constant(constant.real(), options); });

    // Periods: empty, not a power of two, longer than the slots.
    const std::size_t period_size =
        odd()
            ? pick<std::size_t>(rng, {0, 3, 5, 6, bound + 1, 2 * bound, max_slots + 1, std::size_t{1} << (rng() % 11)})
            : std::size_t{1} << (rng() % (std::bit_width(bound)));
    const Values period = draw_values(rng, std::min<std::size_t>(period_size, 4 * max_slots));
    const std::string period_args = "(period of " + std::to_string(period.size()) + ", level " + std::to_string(level) +
                                    ", scale " + show(scale) + ", slots " + std::to_string(slots) + ")";
    Plaintext periodic;
    if (attempt(tally, "encode_periodic" + period_args, "encode_periodic",
                [&] { periodic = encoder.encode_periodic(period, options); })) {
      attempt(tally, "decode(encode_periodic" + period_args + ")", "decode", [&] { (void)encoder.decode(periodic); });
    }
    PeriodicPlaintext compressed;
    if (attempt(tally, "encode_periodic_compressed" + period_args, "encode_periodic_compressed",
                [&] { compressed = encoder.encode_periodic_compressed(period, options); })) {
      // A hand-edited compressed plaintext: odd gaps, levels and word counts.
      PeriodicPlaintext edited = compressed;
      switch (rng() % 4) {
        case 0:
          edited.gap = pick<std::size_t>(rng, {0, 3, 2 * f.context->ring_degree(), std::size_t{1} << 40});
          break;
        case 1:
          edited.level = draw_level(rng, max_level);
          break;
        case 2:
          edited.words.resize(rng() % (edited.words.size() + 3));
          break;
        default:
          edited.slots = draw_slots(rng, max_slots);
          break;
      }
      const std::string what = "PeriodicPlaintext{gap " + std::to_string(edited.gap) + ", level " +
                               std::to_string(edited.level) + ", " + std::to_string(edited.words.size()) +
                               " words, slots " + std::to_string(edited.slots) + "}";
      attempt(tally, what + ".expand()", "plaintext", [&] { (void)edited.expand(); });
      attempt(tally, "evaluator.upload(" + what + ")", "", [&] { (void)f.evaluator.upload(edited); });
    }
  }
  INFO(tally.succeeded << " calls succeeded, " << tally.typed << " threw cerium::Errors");
  CHECK(tally.succeeded > 100);
  CHECK(tally.typed > 100);
}

TEST_CASE("decode, extend, encrypt and decrypt of mismatched and odd objects", "[ckks][api_arguments]") {
  auto rng = cerium_test::make_rng(2602);
  INFO("seed " << cerium_test::test_seed());
  const Fixture& f = fixtures().f;
  const Fixture& g = fixtures().g;
  const int max_level = f.context->max_level();
  const Operands o = make_operands(rng);
  Tally tally;
  for (std::size_t i = 0; i < o.pts.size(); ++i) {
    const std::string what = "a plaintext (" + o.pt_names[i] + ")";
    attempt(tally, "decode(" + what + ")", "decode", [&] { (void)f.encoder.decode(o.pts[i]); });
    attempt(tally, "decode_real(" + what + ")", "decode", [&] { (void)f.encoder.decode_real(o.pts[i]); });
    attempt(tally, "extend(" + what + ")", "extend", [&] { (void)f.encoder.extend(o.pts[i]); });
    attempt(tally, "encrypt(" + what + ")", "encrypt", [&] { (void)f.encryptor.encrypt(o.pts[i]); });
    attempt(tally, "upload(" + what + ")", "upload", [&] { (void)f.evaluator.upload(o.pts[i]); });
    attempt(tally, "download(" + what + ")", "download", [&] { (void)f.evaluator.download(o.pts[i]); });
  }
  for (std::size_t i = 0; i < o.cts.size(); ++i) {
    const std::string what = "a ciphertext (" + o.names[i] + ")";
    // A ciphertext whose parts were taken away may be refused by the Ciphertext constructor, naming the parts.
    const std::string part = o.names[i].find("part") != std::string::npos ? "|part" : "";
    attempt(tally, "decrypt(" + what + ")", "decrypt", [&] { (void)f.decryptor.decrypt(o.cts[i]); });
    attempt(tally, "upload(" + what + ")", "upload" + part, [&] { (void)f.evaluator.upload(o.cts[i]); });
    attempt(tally, "download(" + what + ")", "download" + part, [&] { (void)f.evaluator.download(o.cts[i]); });
    attempt(tally, "clone(" + what + ")", "part", [&] { (void)o.cts[i].clone(); });
    const std::size_t index = pick<std::size_t>(rng, {0, 1, 2, 3, std::numeric_limits<std::size_t>::max()});
    attempt(tally, what + ".part(" + std::to_string(index) + ")", "part", [&] { (void)o.cts[i].part(index); });
  }
  // Plaintexts at every level, slot count and a range of scales, through both encryptors and the decryptor.
  const Encryptor secret_encryptor(f.keygen.secret_key());
  for (int draw = 0; draw < 200; ++draw) {
    const int level = static_cast<int>(rng() % static_cast<std::uint64_t>(max_level + 1));
    const std::size_t slots = std::size_t{1} << (rng() % 10);
    const double scale = pick<double>(rng, {0x1p10, 0x1p20, 0x1p28, 0x1p40, 1.0, 2.0});
    const Values x = random_complex(rng, 1 + rng() % slots);
    const std::string args =
        "(level " + std::to_string(level) + ", slots " + std::to_string(slots) + ", scale " + show(scale) + ")";
    Plaintext pt;
    if (!attempt(tally, "encode" + args, "encode",
                 [&] { pt = f.encoder.encode(x, {.level = level, .scale = scale, .slots = slots}); }))
      continue;
    Ciphertext ct;
    const Encryptor& encryptor = rng() % 2 == 0 ? f.encryptor : secret_encryptor;
    if (!attempt(tally, "encrypt" + args, "encrypt", [&] { ct = encryptor.encrypt(pt); })) continue;
    CHECK(ct.level() == level);
    attempt(tally, "decrypt" + args, "decrypt", [&] { (void)f.decrypt(ct); });
    const NoiseFlooding flooding{.noise_bound = draw_double(rng, 1e3),
                                 .statistical_security = pick<int>(rng, {int_min, -1, 0, 1, 30, 128, 129, int_max}),
                                 .query_budget = pick<std::uint64_t>(rng, {0, 1, 1024, ~std::uint64_t{0}})};
    attempt(tally,
            "decrypt_public" + args + " with bound " + show(flooding.noise_bound) + ", security " +
                std::to_string(flooding.statistical_security) + ", budget " + std::to_string(flooding.query_budget),
            "", [&] { (void)f.decryptor.decrypt_public(ct, flooding); });
  }
  // Plaintexts and ciphertexts made by hand: odd levels, slot counts, scales and contexts.
  for (int draw = 0; draw < 200; ++draw) {
    const int level = draw_level(rng, max_level);
    const int poly_level = static_cast<int>(rng() % static_cast<std::uint64_t>(max_level + 1));
    const std::size_t slots = draw_slots(rng, f.max_slots());
    const double scale = draw_double(rng, 0x1p28);
    const bool foreign = rng() % 8 == 0;
    const ContextPtr context = pick<ContextPtr>(rng, {f.context, f.context, f.context, nullptr, g.context});
    const std::string args = "(level " + std::to_string(level) + ", a polynomial at level " +
                             std::to_string(poly_level) + (foreign ? " of another context" : "") + ", scale " +
                             show(scale) + ", slots " + std::to_string(slots) +
                             (context == nullptr ? ", no context" : "") + ")";
    auto poly = [&] {
      return foreign ? ring::RnsPoly(g.context->q_basis(0)) : ring::RnsPoly(f.context->q_basis(poly_level));
    };
    Plaintext pt;
    if (attempt(tally, "Plaintext" + args, "plaintext",
                [&] { pt = Plaintext(context, poly(), level, scale, slots); })) {
      attempt(tally, "decode(Plaintext" + args + ")", "decode", [&] { (void)f.encoder.decode(pt); });
      attempt(tally, "encrypt(Plaintext" + args + ")", "encrypt", [&] { (void)f.encryptor.encrypt(pt); });
    }
    const std::size_t part_count = pick<std::size_t>(rng, {0, 1, 2, 2, 2, 3, 4});
    Ciphertext ct;
    if (attempt(tally, "Ciphertext" + args + " of " + std::to_string(part_count) + " parts", "ciphertext", [&] {
          std::vector<ring::RnsPoly> parts;
          for (std::size_t k = 0; k < part_count; ++k) parts.push_back(poly());
          ct = Ciphertext(context, std::move(parts), level, scale, slots);
        })) {
      attempt(tally, "decrypt(Ciphertext" + args + ")", "decrypt", [&] { (void)f.decryptor.decrypt(ct); });
      const std::int64_t steps = draw_steps(rng);
      attempt(tally, "rotate(Ciphertext" + args + ", " + std::to_string(steps) + ")", "rotate",
              [&] { (void)f.evaluator.rotate(ct, steps); });
    }
  }
  // Encryptors and decryptors of empty keys.
  attempt(tally, "Encryptor(PublicKey{})", "encryptor", [&] { (void)Encryptor(PublicKey{}); });
  attempt(tally, "Encryptor(SecretKey{})", "encryptor", [&] { (void)Encryptor(SecretKey{}); });
  attempt(tally, "Decryptor(SecretKey{})", "", [&] { (void)Decryptor(SecretKey{}); });
  attempt(tally, "Encoder(nullptr)", "Encoder", [&] { (void)Encoder(nullptr); });
  attempt(tally, "Evaluator(nullptr)", "evaluator", [&] { (void)Evaluator(nullptr); });
  attempt(tally, "Evaluator(scale_headroom_bits -1)", "scale_headroom_bits",
          [&] { (void)Evaluator(f.context, {}, EvaluatorOptions{.scale_headroom_bits = -1}); });
  INFO(tally.succeeded << " calls succeeded, " << tally.typed << " threw cerium::Errors");
  CHECK(tally.succeeded > 50);
  CHECK(tally.typed > 50);
}

namespace {

// A result an operation returned: a level of the parameters and a usable scale.
void check_result(const Ciphertext& ct, const std::string& call) {
  INFO(call << " returned level " << ct.level() << ", scale " << ct.scale() << ", " << ct.size() << " parts");
  if (ct.empty()) return;
  CHECK(ct.level() >= 0);
  CHECK(ct.level() <= ct.context()->max_level());
  CHECK(std::isfinite(ct.scale()));
  CHECK(ct.scale() >= 1);
  CHECK((ct.size() == 2 || ct.size() == 3));
}

}  // namespace

TEST_CASE("evaluator: random operations on odd operands and arguments throw cerium::Errors only",
          "[ckks][api_arguments]") {
  auto rng = cerium_test::make_rng(2603);
  INFO("seed " << cerium_test::test_seed());
  const Fixture& f = fixtures().f;
  const Evaluator& ev = f.evaluator;
  const Evaluator keyless(f.context);  // no relinearization key, no Galois keys
  const int max_level = f.context->max_level();
  const Operands o = make_operands(rng);
  Tally tally;
  for (int draw = 0; draw < 400; ++draw) {
    const std::size_t ai = rng() % o.cts.size(), bi = rng() % o.cts.size(), pi = rng() % o.pts.size();
    const Ciphertext& a = o.cts[ai];
    const Ciphertext& b = o.cts[bi];
    const Plaintext& p = o.pts[pi];
    const std::string an = "a ciphertext (" + o.names[ai] + ")", bn = "a ciphertext (" + o.names[bi] + ")",
                      pn = "a plaintext (" + o.pt_names[pi] + ")";
    const double constant = draw_double(rng, 0.5);
    const std::complex<double> complex_constant(draw_double(rng, 0.5), draw_double(rng, 0.25));
    const std::int64_t steps = draw_steps(rng);
    const std::int64_t integer = draw_integer(rng);
    const int level = draw_level(rng, max_level);
    const double scale = draw_double(rng, 0x1p28);
    Ciphertext out;
    Ciphertext copy;
    std::string call;
    // A ciphertext whose parts were taken away may be refused by the Ciphertext constructor (the out-of-place
    // operations copy their operand first), whose message names the parts rather than the operation.
    const bool malformed =
        o.names[ai].find("part") != std::string::npos || o.names[bi].find("part") != std::string::npos;
    const auto accepted = [&](std::string_view name) { return std::string(name) + (malformed ? "|part" : ""); };
    // Runs an out-of-place operation (its result is checked) or an in-place one on a copy of a.
    const auto run = [&](std::string c, std::string_view name, auto&& op) {
      call = std::move(c);
      if (attempt(tally, call, accepted(name), [&] { out = op(); })) check_result(out, call);
    };
    const auto run_inplace = [&](std::string c, std::string_view name, auto&& op) {
      call = std::move(c);
      if (!attempt(tally, "clone(" + an + ")", "part", [&] { copy = a.clone(); })) return;
      if (attempt(tally, call, accepted(name), [&] { op(copy); })) check_result(copy, call);
    };
    switch (rng() % 34) {
      case 0:
        run("add(" + an + ", " + bn + ")", "add", [&] { return ev.add(a, b); });
        break;
      case 1:
        run("sub(" + an + ", " + bn + ")", "sub", [&] { return ev.sub(a, b); });
        break;
      case 2:
        run_inplace("add_inplace(" + an + ", " + bn + ")", "add", [&](Ciphertext& c) { ev.add_inplace(c, b); });
        break;
      case 3:
        run("add(" + an + ", " + pn + ")", "add", [&] { return ev.add(a, p); });
        break;
      case 4:
        run_inplace("sub_inplace(" + an + ", " + pn + ")", "sub", [&](Ciphertext& c) { ev.sub_inplace(c, p); });
        break;
      case 5:
        run("add(" + an + ", " + show(constant) + ")", "add", [&] { return ev.add(a, constant); });
        break;
      case 6:
        run("sub(" + an + ", complex " + show(complex_constant.real()) + " + " + show(complex_constant.imag()) + "i)",
            "sub", [&] { return ev.sub(a, complex_constant); });
        break;
      case 7:
        run("multiply(" + an + ", " + bn + ")", "multiply", [&] { return ev.multiply(a, b); });
        break;
      case 8:
        run("multiply_no_relin(" + an + ", " + bn + ")", "multiply", [&] { return ev.multiply_no_relin(a, b); });
        break;
      case 9:
        run("multiply_rescale(" + an + ", " + bn + ")", "multiply", [&] { return ev.multiply_rescale(a, b); });
        break;
      case 10:
        run("relinearize(" + an + ")", "relinearize", [&] { return ev.relinearize(a); });
        break;
      case 11:
        run("relinearize_rescale(" + an + ")", "relinearize", [&] { return ev.relinearize_rescale(a); });
        break;
      case 12:
        run("multiply(" + an + ", " + pn + ")", "multiply", [&] { return ev.multiply(a, p); });
        break;
      case 13:
        run("multiply(" + an + ", " + show(constant) + ")", "multiply", [&] { return ev.multiply(a, constant); });
        break;
      case 14:
        run("multiply(" + an + ", complex " + show(complex_constant.real()) + " + " + show(complex_constant.imag()) +
                "i)",
            "multiply", [&] { return ev.multiply(a, complex_constant); });
        break;
      case 15:
        run("multiply_integer(" + an + ", " + std::to_string(integer) + ")", "multiply_integer",
            [&] { return ev.multiply_integer(a, integer); });
        break;
      case 16:
        run("rescale(" + an + ")", "rescale", [&] { return ev.rescale(a); });
        break;
      case 17:
        run("level_down(" + an + ", " + std::to_string(level) + ")", "level_down",
            [&] { return ev.level_down(a, level); });
        break;
      case 18:
        run("adjust_scale(" + an + ", " + show(scale) + ")", "adjust_scale", [&] { return ev.adjust_scale(a, scale); });
        break;
      case 19:
        run("rotate(" + an + ", " + std::to_string(steps) + ")", "rotate", [&] { return ev.rotate(a, steps); });
        break;
      case 20:
        run("rotate(" + an + ", " + std::to_string(steps) + ") without Galois keys", "rotate",
            [&] { return keyless.rotate(a, steps); });
        break;
      case 21:
        run("conjugate(" + an + ")", "conjugate", [&] { return ev.conjugate(a); });
        break;
      case 22:
        run("conjugate(" + an + ") without Galois keys", "conjugate", [&] { return keyless.conjugate(a); });
        break;
      case 23: {
        std::vector<std::int64_t> list(rng() % 5);
        for (auto& s : list) s = draw_steps(rng);
        std::string text;
        for (const auto s : list) text += (text.empty() ? "" : ", ") + std::to_string(s);
        const Evaluator& which = rng() % 4 == 0 ? keyless : ev;
        call = "rotate_hoisted(" + an + ", {" + text + "})" + (&which == &keyless ? " without Galois keys" : "");
        std::vector<Ciphertext> rotated;
        if (attempt(tally, call, "rotate", [&] { rotated = which.rotate_hoisted(a, list); })) {
          CHECK(rotated.size() == list.size());
          for (const auto& r : rotated) check_result(r, call);
        }
        break;
      }
      case 24:
        run("negate(" + an + ")", "negate", [&] { return ev.negate(a); });
        break;
      case 25: {
        // Spans of any length (mismatched too), with null, empty and foreign terms among them.
        const std::size_t terms = rng() % 4, plains = rng() % 8 == 0 ? rng() % 4 : terms;
        std::vector<const Ciphertext*> cs;
        std::vector<const Plaintext*> ps;
        std::string text;
        for (std::size_t t = 0; t < terms; ++t) {
          const std::size_t k = rng() % 3 == 0 ? rng() % o.cts.size() : ai;
          cs.push_back(rng() % 16 == 0 ? nullptr : &o.cts[k]);
          text += (t ? ", " : "") + (cs.back() ? o.names[k] : std::string("null"));
        }
        text += "} x {";
        for (std::size_t t = 0; t < plains; ++t) {
          const std::size_t k = rng() % 3 == 0 ? rng() % o.pts.size() : pi;
          ps.push_back(rng() % 16 == 0 ? nullptr : &o.pts[k]);
          text += (t ? ", " : "") + (ps.back() ? o.pt_names[k] : std::string("null"));
        }
        // Terms whose rescaled products cannot be aligned are refused by the sum's add, which names itself.
        run("multiply_plain_rescale_sum({" + text + "})",
            "multiply_plain_rescale_sum|add:", [&] { return ev.multiply_plain_rescale_sum(cs, ps); });
        break;
      }
      case 26: {
        const std::size_t slots = draw_slots(rng, f.max_slots());
        call = "rotation_key(" + std::to_string(steps) + ", " + std::to_string(slots) + ")";
        attempt(tally, call, "rotat", [&] { (void)ev.rotation_key(steps, slots); });
        attempt(tally, call + " without Galois keys", "rotat", [&] { (void)keyless.rotation_key(steps, slots); });
        break;
      }
      case 27:
        call = "level_prime_product(" + std::to_string(level) + ")";
        attempt(tally, call, "level", [&] { (void)ev.level_prime_product(level); });
        break;
      case 28:
        run("multiply(" + an + ", " + bn + ") without a relinearization key", "multiply",
            [&] { return keyless.multiply(a, b); });
        break;
      case 29:
        run_inplace("rescale_inplace(" + an + ")", "rescale", [&](Ciphertext& c) { ev.rescale_inplace(c); });
        break;
      case 30:
        run_inplace("level_down_inplace(" + an + ", " + std::to_string(level) + ")", "level_down",
                    [&](Ciphertext& c) { ev.level_down_inplace(c, level); });
        break;
      case 31:
        run_inplace("multiply_inplace(" + an + ", " + show(constant) + ")", "multiply",
                    [&](Ciphertext& c) { ev.multiply_inplace(c, constant); });
        break;
      case 32:
        run_inplace("rotate_inplace(" + an + ", " + std::to_string(steps) + ")", "rotate",
                    [&](Ciphertext& c) { ev.rotate_inplace(c, steps); });
        break;
      default:
        run_inplace("multiply_rescale_inplace(" + an + ", " + bn + ")", "multiply",
                    [&](Ciphertext& c) { ev.multiply_rescale_inplace(c, b); });
        break;
    }
  }
  // Every operation once on an empty and on a moved-from ciphertext (first and second operand).
  const Ciphertext good = f.encrypt(random_complex(rng, 4));
  const Plaintext plain = f.encoder.encode(random_complex(rng, 4));
  for (const std::string& kind : {std::string("empty"), std::string("moved-from")}) {
    Ciphertext e;
    if (kind == "moved-from") {
      Ciphertext source = f.encrypt(random_complex(rng, 4));
      Ciphertext taken = std::move(source);
      e = std::move(source);
    }
    const std::string en = "an " + kind + " ciphertext";
    const std::vector<std::int64_t> one_step = {1};
    const std::vector<std::pair<std::string, std::function<void()>>> calls = {
        {"add(" + en + ", good)", [&] { (void)ev.add(e, good); }},
        {"add(good, " + en + ")", [&] { (void)ev.add(good, e); }},
        {"sub(" + en + ", plaintext)", [&] { (void)ev.sub(e, plain); }},
        {"add(" + en + ", 1.0)", [&] { (void)ev.add(e, 1.0); }},
        {"negate(" + en + ")", [&] { (void)ev.negate(e); }},
        {"multiply(" + en + ", good)", [&] { (void)ev.multiply(e, good); }},
        {"multiply(good, " + en + ")", [&] { (void)ev.multiply(good, e); }},
        {"multiply_no_relin(" + en + ", good)", [&] { (void)ev.multiply_no_relin(e, good); }},
        {"multiply_rescale(" + en + ", good)", [&] { (void)ev.multiply_rescale(e, good); }},
        {"relinearize(" + en + ")", [&] { (void)ev.relinearize(e); }},
        {"relinearize_rescale(" + en + ")", [&] { (void)ev.relinearize_rescale(e); }},
        {"multiply(" + en + ", plaintext)", [&] { (void)ev.multiply(e, plain); }},
        {"multiply(" + en + ", 0.5)", [&] { (void)ev.multiply(e, 0.5); }},
        {"multiply_integer(" + en + ", 3)", [&] { (void)ev.multiply_integer(e, 3); }},
        {"rescale(" + en + ")", [&] { (void)ev.rescale(e); }},
        {"level_down(" + en + ", 0)", [&] { (void)ev.level_down(e, 0); }},
        {"adjust_scale(" + en + ", 2^28)", [&] { (void)ev.adjust_scale(e, 0x1p28); }},
        {"rotate(" + en + ", 1)", [&] { (void)ev.rotate(e, 1); }},
        {"conjugate(" + en + ")", [&] { (void)ev.conjugate(e); }},
        {"rotate_hoisted(" + en + ", {1})", [&] { (void)ev.rotate_hoisted(e, one_step); }},
        {"rotate_hoisted(" + en + ", {})", [&] { (void)ev.rotate_hoisted(e, {}); }},
        {"upload(" + en + ")", [&] { (void)ev.upload(e); }},
        {"download(" + en + ")", [&] { (void)ev.download(e); }},
        {"decrypt(" + en + ")", [&] { (void)f.decryptor.decrypt(e); }},
        {"add_inplace(" + en + ", good)",
         [&] {
           Ciphertext c = e.clone();
           ev.add_inplace(c, good);
         }},
        {"multiply_inplace(" + en + ", 0.5)",
         [&] {
           Ciphertext c = e.clone();
           ev.multiply_inplace(c, 0.5);
         }},
        {"rescale_inplace(" + en + ")",
         [&] {
           Ciphertext c = e.clone();
           ev.rescale_inplace(c);
         }},
        {"rotate_inplace(" + en + ", 1)",
         [&] {
           Ciphertext c = e.clone();
           ev.rotate_inplace(c, 1);
         }},
    };
    for (const auto& [call, fn] : calls) {
      // An empty operand is never a success.
      CHECK_FALSE(attempt(tally, call, "", fn));
    }
  }
  // rotate_hoisted with no steps gives no ciphertexts.
  std::vector<Ciphertext> none;
  CHECK(attempt(tally, "rotate_hoisted(good, {})", "", [&] { none = ev.rotate_hoisted(good, {}); }));
  CHECK(none.empty());
  INFO(tally.succeeded << " calls succeeded, " << tally.typed << " threw cerium::Errors");
  CHECK(tally.succeeded > 50);
  CHECK(tally.typed > 100);
}

TEST_CASE("key generation: odd rotation step lists and Galois elements throw cerium::Errors only",
          "[ckks][api_arguments]") {
  auto rng = cerium_test::make_rng(2604);
  INFO("seed " << cerium_test::test_seed());
  const Fixture& f = fixtures().f;
  const Fixture& g = fixtures().g;
  const Ciphertext x = f.encrypt(random_complex(rng, 8));
  const Ciphertext sparse = f.encrypt(random_complex(rng, 8), -1, 8);
  Tally tally;
  for (int draw = 0; draw < 40; ++draw) {
    // 0, duplicates, huge, INT64_MIN, multiples of N/2 and of N.
    std::vector<std::int64_t> steps(rng() % 5);
    for (auto& s : steps) s = draw_steps(rng);
    if (!steps.empty() && rng() % 3 == 0) steps.push_back(steps.front());
    std::string text;
    for (const auto s : steps) text += (text.empty() ? "" : ", ") + std::to_string(s);
    const bool conjugation = rng() % 2 == 0;
    const std::string call = "galois_keys({" + text + "}, conjugation " + (conjugation ? "on" : "off") + ")";
    std::shared_ptr<const GaloisKeys> keys;
    if (!attempt(tally, call, "",
                 [&] { keys = std::make_shared<const GaloisKeys>(f.keygen.galois_keys(steps, conjugation)); }))
      continue;
    // The keys serve every step they were made for, at full and at sparse slots.
    Evaluator ev(f.context);
    ev.set_galois_keys(keys);
    for (const std::int64_t s : steps) {
      CHECK(attempt(tally, "rotate(x, " + std::to_string(s) + ") with the keys of " + call, "rotate",
                    [&] { (void)ev.rotate(x, s); }));
      CHECK(attempt(tally, "rotate(8 slots, " + std::to_string(s) + ") with the keys of " + call, "rotate",
                    [&] { (void)ev.rotate(sparse, s); }));
    }
    if (conjugation) CHECK(attempt(tally, "conjugate(x) with the keys of " + call, "", [&] { (void)ev.conjugate(x); }));
    // Galois elements of any value.
    const auto element =
        pick<std::uint32_t>(rng, {0, 1, 2, 3, 2047, 2048, 2049, 4095, 0xffffffffu, static_cast<std::uint32_t>(rng())});
    attempt(tally, "galois_key(" + std::to_string(element) + ")", "Galois element",
            [&] { (void)f.keygen.galois_key(element); });
  }
  // Switching keys from polynomials of the wrong basis, form or context, or none.
  KeyGenerator keygen(f.context);
  attempt(tally, "switching_key(an empty polynomial)", "switching key",
          [&] { (void)keygen.switching_key(ring::RnsPoly{}); });
  attempt(tally, "switching_key(a polynomial over Q_0)", "switching key",
          [&] { (void)keygen.switching_key(ring::RnsPoly(f.context->q_basis(0), ring::PolyForm::ntt)); });
  attempt(tally, "switching_key(a coefficient-form polynomial)", "switching key",
          [&] { (void)keygen.switching_key(ring::RnsPoly(f.context->key_basis(), ring::PolyForm::coefficient)); });
  attempt(tally, "switching_key(another context's polynomial)", "switching key",
          [&] { (void)keygen.switching_key(ring::RnsPoly(g.context->key_basis(), ring::PolyForm::ntt)); });
  attempt(tally, "KeyGenerator(nullptr)", "key generator", [&] { (void)KeyGenerator(ContextPtr{}); });
  attempt(tally, "KeyGenerator(SecretKey{})", "key generator", [&] { (void)KeyGenerator(SecretKey{}); });
  Evaluator scratch(f.context);
  attempt(tally, "set_galois_keys(GaloisKeys{})", "set_galois_keys",
          [&] { scratch.set_galois_keys(std::make_shared<const GaloisKeys>()); });
  attempt(tally, "set_relinearization_key(RelinearizationKey{})", "set_relinearization_key",
          [&] { scratch.set_relinearization_key(std::make_shared<const RelinearizationKey>()); });
  INFO(tally.succeeded << " calls succeeded, " << tally.typed << " threw cerium::Errors");
  CHECK(tally.succeeded > 20);
  CHECK(tally.typed > 10);
}

TEST_CASE("regressions: std exceptions, divisions by zero and messages that named no call", "[ckks][api_arguments]") {
  using cerium_test::require_error;
  auto rng = cerium_test::make_rng(2605);
  INFO("seed " << cerium_test::test_seed());
  const Fixture& f = fixtures().f;
  const Evaluator& ev = f.evaluator;
  const Values x = random_complex(rng, 8);
  const Ciphertext good = f.encrypt(x);
  // Ciphertext::part's .at() threw std::out_of_range; relinearize of a one-part ciphertext read part 2.
  require_error<InvalidArgument>(
      "good.part(2)", [&] { (void)good.part(2); }, "part(2)");
  Ciphertext one_part = f.encrypt(x);
  one_part.parts().pop_back();
  require_error<InvalidArgument>(
      "relinearize(one part)", [&] { (void)ev.relinearize(one_part); }, "relinearize");
  require_error<InvalidArgument>(
      "rescale_inplace(one part)", [&] { ev.rescale_inplace(one_part); }, "rescale");
  Ciphertext no_parts = f.encrypt(x);
  no_parts.parts().clear();
  require_error<InvalidArgument>(
      "add_inplace(no parts, good)", [&] { ev.add_inplace(no_parts, good); }, "add");
  require_error<InvalidArgument>(
      "multiply_integer_inplace(no parts, 3)", [&] { ev.multiply_integer_inplace(no_parts, 3); }, "multiply_integer");
  // A plaintext after take_poly() kept its context, and decode read the missing polynomial (a segmentation fault).
  Plaintext taken = f.encoder.encode(x);
  (void)std::move(taken).take_poly();
  CHECK(taken.empty());
  require_error<MismatchError>(
      "decode(a plaintext after take_poly)", [&] { (void)f.encoder.decode(taken); }, "decode");
  require_error<MismatchError>("multiply(good, a plaintext after take_poly)", [&] { (void)ev.multiply(good, taken); });
  // A ciphertext made with 0 slots divided by zero when rotated; the constructors check the slot count.
  for (const std::size_t slots : {std::size_t{0}, std::size_t{3}, f.max_slots() * 2}) {
    require_error<InvalidArgument>(
        "Ciphertext(" + std::to_string(slots) + " slots)",
        [&] {
          std::vector<ring::RnsPoly> parts;
          parts.push_back(good.part(0).clone());
          parts.push_back(good.part(1).clone());
          (void)Ciphertext(f.context, std::move(parts), good.level(), good.scale(), slots);
        },
        "slots");
    require_error<InvalidArgument>(
        "Plaintext(" + std::to_string(slots) + " slots)",
        [&] { (void)Plaintext(f.context, f.encoder.encode(x).poly().clone(), f.context->max_level(), 0x1p28, slots); },
        "slots");
  }
  // Levels outside the parameters: the constructors name themselves.
  require_error<LevelError>(
      "Plaintext(level 9)", [&] { (void)Plaintext(f.context, f.encoder.encode(x).poly().clone(), 9, 0x1p28, 8); },
      "plaintext: level 9");
  // A compressed periodic plaintext with gap 0 divided by zero in expand().
  PeriodicPlaintext periodic = f.encoder.encode_periodic_compressed(Values(4, Complex(0.5)));
  periodic.gap = 0;
  require_error<MismatchError>(
      "PeriodicPlaintext{gap 0}.expand()", [&] { (void)periodic.expand(); }, "blocks of 0");
  require_error<MismatchError>(
      "upload(PeriodicPlaintext{gap 0})", [&] { (void)ev.upload(periodic); }, "blocks of 0");
  periodic.gap = 256;
  periodic.level = 7;
  require_error<LevelError>(
      "PeriodicPlaintext{level 7}.expand()", [&] { (void)periodic.expand(); }, "level 7");
  // Messages that named the Plaintext constructor, round_to_residues, add or adjust_scale instead of the call.
  require_error<LevelError>(
      "encode(scale 0.5)", [&] { (void)f.encoder.encode(x, {.scale = 0.5}); }, "encode:");
  require_error<LevelError>(
      "encode(no values, scale 2^200)", [&] { (void)f.encoder.encode(Values{}, {.scale = 0x1p200}); }, "encode:");
  require_error<LevelError>(
      "encode_constant(scale 0.5)", [&] { (void)f.encoder.encode_constant(0.5, {.scale = 0.5}); }, "encode_constant:");
  require_error<InvalidArgument>(
      "multiply(good, 1e300)", [&] { (void)ev.multiply(good, 1e300); }, "multiply by a constant");
  require_error<InvalidArgument>(
      "multiply(good, 1e300 i)", [&] { (void)ev.multiply(good, std::complex<double>(0, 1e300)); },
      "multiply by a constant");
  require_error<InvalidArgument>(
      "sub(good, NaN)", [&] { (void)ev.sub(good, not_a_number); }, "sub a constant");
  require_error<InvalidArgument>(
      "sub(good, 1e300)", [&] { (void)ev.sub(good, 1e300); }, "sub a constant");
  // The higher operand's scale cannot come down onto the lower one's: 2^56 at the top onto 2^10 one level below.
  const Ciphertext product = ev.multiply(good, good);
  const Ciphertext lower = f.encrypt(x, f.context->max_level() - 1, 0, 0x1p10);
  require_error<LevelError>(
      "add(scale 2^56 at the top, scale 2^10 one level below)", [&] { (void)ev.add(product, lower); }, "add:");
  require_error<LevelError>(
      "sub(scale 2^10 one level below, scale 2^56 at the top)", [&] { (void)ev.sub(lower, product); }, "sub:");
  const Ciphertext bottom = f.encrypt(x, 0);
  const Plaintext plain = f.encoder.encode(x, {.level = 0});
  const std::vector<const Ciphertext*> cs = {&bottom};
  const std::vector<const Plaintext*> ps = {&plain};
  require_error<LevelError>(
      "multiply_plain_rescale_sum(level 0)", [&] { (void)ev.multiply_plain_rescale_sum(cs, ps); },
      "multiply_plain_rescale_sum");
}
