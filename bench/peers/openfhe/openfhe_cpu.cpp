// OpenFHE 1.5.1 CKKS timings on the CPU, for side-by-side comparison with bench/cpu/bench_ckks.cpp and
// bench/cpu/bench_bootstrap.cpp (Cerium). Built by build.sh against the OpenFHE PyPI wheel's shared libraries; see
// README.md. Prints one JSON object per line: a "params" line describing the context, one "check" line per
// operation (decrypted result against the plaintext result) and one "timing" line per operation.
//
// Usage: openfhe_cpu [--preset n14|n16|boot16] [--reps R] [--boot-reps R] [--ops LIST] [--bootstrap]
//                    [--scaling fixedmanual|flexibleauto] [--logn L]
//   --preset     parameter set (default n14); boot16 builds a bootstrappable context and times EvalBootstrap.
//   --reps       timed repetitions per operation, after one untimed warm-up (default 5).
//   --boot-reps  timed repetitions of EvalBootstrap (default: --reps).
//   --ops        comma-separated subset of mult,rotate,keyswitch,boot (default: mult,rotate,keyswitch for
//                n14/n16, boot for boot16).
//   --bootstrap  the same as --preset boot16.
//   --scaling    OpenFHE scaling technique (default fixedmanual: the rescale is an explicit call, as in Cerium).
//   --logn       overrides log2(N) of the preset (smoke tests of the bootstrap path at small N; not a preset).
// Threads: OMP_NUM_THREADS (OpenFHE reads omp_get_max_threads() at load time).

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "openfhe.h"

using namespace lbcrypto;

namespace {

struct Preset {
  std::string name;
  uint32_t log_n = 14;
  uint32_t depth = 4;            // multiplicative depth (for boot16: filled in from GetBootstrapDepth)
  uint32_t scaling_bits = 56;    // ScalingModSize
  uint32_t first_mod_bits = 60;  // FirstModSize
  uint32_t dnum = 3;             // NumLargeDigits
  bool bootstrappable = false;
  uint32_t levels_after_boot = 9;                // boot16 only
  std::vector<uint32_t> level_budget = {3, 3};  // boot16 only: {CoeffsToSlots, SlotsToCoeffs}
  SecretKeyDist secret = UNIFORM_TERNARY;
};

Preset preset_by_name(const std::string& name) {
  Preset p;
  p.name = name;
  if (name == "n14") {
    p.log_n = 14, p.depth = 4, p.dnum = 3;
  } else if (name == "n16") {
    p.log_n = 16, p.depth = 24, p.dnum = 5;
  } else if (name == "boot16") {
    p.log_n = 16, p.dnum = 6, p.bootstrappable = true;
    p.secret = SPARSE_ENCAPSULATED;
    p.depth = p.levels_after_boot + FHECKKSRNS::GetBootstrapDepth(p.level_budget, p.secret);
  } else {
    throw std::invalid_argument("unknown preset '" + name + "' (n14, n16, boot16)");
  }
  return p;
}

const char* secret_name(SecretKeyDist d) {
  switch (d) {
    case GAUSSIAN: return "GAUSSIAN";
    case UNIFORM_TERNARY: return "UNIFORM_TERNARY";
    case SPARSE_TERNARY: return "SPARSE_TERNARY";
    case SPARSE_ENCAPSULATED: return "SPARSE_ENCAPSULATED";
  }
  return "?";
}

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Stats {
  double median = 0, min = 0, max = 0;
  int reps = 0;
};

Stats summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  Stats s;
  s.reps = static_cast<int>(ms.size());
  s.min = ms.front();
  s.max = ms.back();
  const std::size_t n = ms.size();
  s.median = (n % 2 == 1) ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  return s;
}

// One untimed warm-up call, then `reps` timed calls. `prepare` (untimed) runs before each call.
Stats time_op(int reps, const std::function<void()>& prepare, const std::function<void()>& op) {
  prepare();
  op();
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    prepare();
    const auto t0 = Clock::now();
    op();
    ms.push_back(elapsed_ms(t0));
  }
  return summarize(ms);
}

struct Common {
  std::string preset;
  uint32_t n = 0, depth = 0, scaling_bits = 0, first_mod_bits = 0, dnum = 0;
  int threads = 1;
  std::string scaling;
};

std::string common_fields(const Common& c) {
  std::ostringstream o;
  o << "\"library\":\"openfhe\",\"version\":\"" << GetOPENFHEVersion() << "\",\"preset\":\"" << c.preset
    << "\",\"N\":" << c.n << ",\"depth\":" << c.depth << ",\"scaling_bits\":" << c.scaling_bits
    << ",\"first_mod_bits\":" << c.first_mod_bits << ",\"dnum\":" << c.dnum << ",\"threads\":" << c.threads
    << ",\"scaling_technique\":\"" << c.scaling << "\"";
  return o.str();
}

void print_timing(const Common& c, const std::string& op, uint32_t limbs, const Stats& s) {
  std::printf("{\"type\":\"timing\",\"operation\":\"%s\",%s,\"limbs\":%u,\"median_ms\":%.3f,\"min_ms\":%.3f,"
              "\"max_ms\":%.3f,\"repetitions\":%d}\n",
              op.c_str(), common_fields(c).c_str(), limbs, s.median, s.min, s.max, s.reps);
  std::fflush(stdout);
}

struct ErrorStats {
  double max_abs = 0, mean_abs = 0;
};

ErrorStats compare(const std::vector<double>& got, const std::vector<double>& want) {
  ErrorStats e;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::abs(got[i] - want[i]);
    e.max_abs = std::max(e.max_abs, d);
    e.mean_abs += d;
  }
  e.mean_abs /= static_cast<double>(want.size());
  return e;
}

void print_check(const Common& c, const std::string& op, const ErrorStats& e, double tolerance, bool& all_ok) {
  const bool ok = e.max_abs <= tolerance;
  all_ok = all_ok && ok;
  std::printf("{\"type\":\"check\",\"operation\":\"%s\",%s,\"max_abs_err\":%.3e,\"mean_abs_err\":%.3e,"
              "\"log2_max_err\":%.2f,\"log2_mean_err\":%.2f,\"tolerance\":%.1e,\"ok\":%s}\n",
              op.c_str(), common_fields(c).c_str(), e.max_abs, e.mean_abs, std::log2(e.max_abs),
              std::log2(e.mean_abs), tolerance, ok ? "true" : "false");
  std::fflush(stdout);
}

std::vector<double> decrypt(const CryptoContext<DCRTPoly>& cc, const PrivateKey<DCRTPoly>& sk,
                            const Ciphertext<DCRTPoly>& ct, std::size_t length) {
  Plaintext pt;
  cc->Decrypt(sk, ct, &pt);
  pt->SetLength(length);
  return pt->GetRealPackedValue();
}

double log2_modulus(const std::shared_ptr<ILDCRTParams<BigInteger>>& params) {
  double bits = 0;
  for (const auto& p : params->GetParams()) bits += std::log2(static_cast<double>(p->GetModulus().ConvertToInt()));
  return bits;
}

struct Options {
  std::string preset = "n14";
  int reps = 5;
  int boot_reps = -1;
  std::string ops;
  std::string scaling = "fixedmanual";
  int log_n_override = 0;
  bool bootstrap_flag = false;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "openfhe_cpu: %s\nusage: openfhe_cpu [--preset n14|n16|boot16] [--reps R] [--boot-reps R] "
               "[--ops mult,rotate,keyswitch,boot] [--bootstrap] [--scaling fixedmanual|flexibleauto] [--logn L]\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  bool preset_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("missing value after " + a);
      return argv[++i];
    };
    if (a == "--preset") {
      o.preset = value();
      preset_given = true;
    } else if (a == "--reps") {
      o.reps = std::atoi(value().c_str());
    } else if (a == "--boot-reps") {
      o.boot_reps = std::atoi(value().c_str());
    } else if (a == "--ops") {
      o.ops = value();
    } else if (a == "--scaling") {
      o.scaling = value();
    } else if (a == "--logn") {
      o.log_n_override = std::atoi(value().c_str());
    } else if (a == "--bootstrap") {
      o.bootstrap_flag = true;
    } else if (a == "-h" || a == "--help") {
      usage("help");
    } else {
      usage("unknown argument " + a);
    }
  }
  if (o.bootstrap_flag) {
    if (preset_given && o.preset != "boot16") usage("--bootstrap uses the boot16 preset; drop --preset " + o.preset);
    o.preset = "boot16";
  }
  if (o.reps < 1) usage("--reps must be at least 1");
  if (o.boot_reps < 0) o.boot_reps = o.reps;
  if (o.boot_reps < 1) usage("--boot-reps must be at least 1");
  if (o.scaling != "fixedmanual" && o.scaling != "flexibleauto") usage("--scaling: fixedmanual or flexibleauto");
  if (o.ops.empty()) o.ops = (o.preset == "boot16") ? "boot" : "mult,rotate,keyswitch";
  return o;
}

bool has_op(const std::string& list, const std::string& op) {
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ','))
    if (item == op) return true;
  return false;
}

int run(const Options& opt) {
  Preset p = preset_by_name(opt.preset);
  if (opt.log_n_override) p.log_n = static_cast<uint32_t>(opt.log_n_override);
  const bool want_mult = has_op(opt.ops, "mult");
  const bool want_rotate = has_op(opt.ops, "rotate");
  const bool want_keyswitch = has_op(opt.ops, "keyswitch");
  const bool want_boot = has_op(opt.ops, "boot");
  if (want_boot && !p.bootstrappable) usage("--ops boot needs --preset boot16");

  const uint32_t n = 1u << p.log_n;
  const uint32_t slots = n / 2;
  const ScalingTechnique technique = opt.scaling == "fixedmanual" ? FIXEDMANUAL : FLEXIBLEAUTO;

  CCParams<CryptoContextCKKSRNS> params;
  params.SetSecurityLevel(HEStd_NotSet);
  params.SetRingDim(n);
  params.SetBatchSize(slots);
  params.SetMultiplicativeDepth(p.depth);
  params.SetScalingModSize(p.scaling_bits);
  params.SetFirstModSize(p.first_mod_bits);
  params.SetScalingTechnique(technique);
  params.SetKeySwitchTechnique(HYBRID);
  params.SetNumLargeDigits(p.dnum);
  params.SetSecretKeyDist(p.secret);

  Common c;
  c.preset = p.name;
  c.n = n;
  c.depth = p.depth;
  c.scaling_bits = p.scaling_bits;
  c.first_mod_bits = p.first_mod_bits;
  c.dnum = p.dnum;
  c.threads = omp_get_max_threads();
  c.scaling = opt.scaling;

  auto t_setup = Clock::now();
  CryptoContext<DCRTPoly> cc = GenCryptoContext(params);
  cc->Enable(PKE);
  cc->Enable(KEYSWITCH);
  cc->Enable(LEVELEDSHE);
  if (p.bootstrappable) {
    cc->Enable(ADVANCEDSHE);
    cc->Enable(FHE);
  }
  const double context_ms = elapsed_ms(t_setup);
  if (cc->GetRingDimension() != n) throw std::runtime_error("OpenFHE chose a different ring dimension");

  const auto crypto = std::dynamic_pointer_cast<CryptoParametersRNS>(cc->GetCryptoParameters());
  const auto q_params = crypto->GetElementParams();
  const uint32_t limbs = static_cast<uint32_t>(q_params->GetParams().size());
  const double log_q = log2_modulus(q_params);
  const double log_p = crypto->GetParamsP() ? log2_modulus(crypto->GetParamsP()) : 0.0;
  const uint32_t p_limbs = crypto->GetParamsP() ? static_cast<uint32_t>(crypto->GetParamsP()->GetParams().size()) : 0;
  std::printf("{\"type\":\"params\",%s,\"slots\":%u,\"q_limbs\":%u,\"log2_Q\":%.1f,\"p_limbs\":%u,\"log2_P\":%.1f,"
              "\"log2_QP\":%.1f,\"secret\":\"%s\",\"key_switching\":\"HYBRID\",\"security\":\"HEStd_NotSet\","
              "\"omp_num_procs\":%d,\"context_ms\":%.1f}\n",
              common_fields(c).c_str(), slots, limbs, log_q, p_limbs, log_p, log_q + log_p, secret_name(p.secret),
              omp_get_num_procs(), context_ms);
  std::fflush(stdout);

  t_setup = Clock::now();
  const KeyPair<DCRTPoly> keys = cc->KeyGen();
  cc->EvalMultKeyGen(keys.secretKey);
  const double keygen_ms = elapsed_ms(t_setup);

  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> a(slots), b(slots);
  for (double& v : a) v = uniform(rng);
  for (double& v : b) v = uniform(rng);

  bool all_ok = true;
  // Decryption noise at scale 2^56 with N <= 2^16 is far below 1e-6; a broken ABI gives O(1) garbage.
  const double tol = 1e-6;

  if (want_mult || want_rotate || want_keyswitch) {
    const Ciphertext<DCRTPoly> ca = cc->Encrypt(keys.publicKey, cc->MakeCKKSPackedPlaintext(a));
    const Ciphertext<DCRTPoly> cb = cc->Encrypt(keys.publicKey, cc->MakeCKKSPackedPlaintext(b));
    const uint32_t top_limbs = static_cast<uint32_t>(ca->GetElements()[0].GetNumOfElements());

    if (want_mult) {
      Ciphertext<DCRTPoly> out;
      // EvalMult = tensor product + relinearization (hybrid key switch), then one rescale that drops one limb.
      // FIXEDMANUAL: RescaleInPlace is that rescale. FLEXIBLEAUTO: RescaleInPlace is a no-op (OpenFHE rescales
      // lazily, before the next multiply), so the scheme's internal rescale is called directly: the same work.
      const Stats s = time_op(
          opt.reps, [] {}, [&] {
            Ciphertext<DCRTPoly> t = cc->EvalMult(ca, cb);
            if (technique == FIXEDMANUAL)
              cc->RescaleInPlace(t);
            else
              cc->GetScheme()->ModReduceInternalInPlace(t, 1);
            out = std::move(t);
          });
      std::vector<double> want(slots);
      for (uint32_t i = 0; i < slots; ++i) want[i] = a[i] * b[i];
      print_check(c, "multiply_relin_rescale", compare(decrypt(cc, keys.secretKey, out, slots), want), tol, all_ok);
      print_timing(c, "multiply_relin_rescale", top_limbs, s);
    }

    if (want_rotate) {
      t_setup = Clock::now();
      cc->EvalRotateKeyGen(keys.secretKey, {1});
      std::printf("{\"type\":\"setup\",\"what\":\"rotation_key_1\",%s,\"ms\":%.1f}\n", common_fields(c).c_str(),
                  elapsed_ms(t_setup));
      Ciphertext<DCRTPoly> out;
      const Stats s = time_op(
          opt.reps, [] {}, [&] { out = cc->EvalRotate(ca, 1); });
      std::vector<double> want(slots);
      for (uint32_t i = 0; i < slots; ++i) want[i] = a[(i + 1) % slots];
      print_check(c, "rotate", compare(decrypt(cc, keys.secretKey, out, slots), want), tol, all_ok);
      print_timing(c, "rotate", top_limbs, s);
    }

    if (want_keyswitch) {
      // A switching key from s to a second secret s2: the same hybrid key switch (ModUp of dnum digits, inner
      // product with the key, ModDown) as relinearization, but its result can be decrypted and checked. The
      // ciphertext is cloned before each call (untimed) so KeySwitchInPlace times the key switch plus one add.
      const KeyPair<DCRTPoly> keys2 = cc->KeyGen();
      t_setup = Clock::now();
      const EvalKey<DCRTPoly> ksk = cc->KeySwitchGen(keys.secretKey, keys2.secretKey);
      std::printf("{\"type\":\"setup\",\"what\":\"key_switch_key\",%s,\"ms\":%.1f}\n", common_fields(c).c_str(),
                  elapsed_ms(t_setup));
      Ciphertext<DCRTPoly> work;
      const Stats s = time_op(
          opt.reps, [&] { work = ca->Clone(); }, [&] { cc->KeySwitchInPlace(work, ksk); });
      work->SetKeyTag(keys2.secretKey->GetKeyTag());
      print_check(c, "key_switch", compare(decrypt(cc, keys2.secretKey, work, slots), a), tol, all_ok);
      print_timing(c, "key_switch", top_limbs, s);
    }
  }

  if (want_boot) {
    t_setup = Clock::now();
    cc->EvalBootstrapSetup(p.level_budget, {0, 0}, slots);
    const double boot_setup_ms = elapsed_ms(t_setup);
    t_setup = Clock::now();
    cc->EvalBootstrapKeyGen(keys.secretKey, slots);
    const double boot_keygen_ms = elapsed_ms(t_setup);
    const uint32_t boot_depth = FHECKKSRNS::GetBootstrapDepth(p.level_budget, p.secret);
    const auto& rot_keys = cc->GetEvalAutomorphismKeyMap(keys.secretKey->GetKeyTag());
    std::printf("{\"type\":\"setup\",\"what\":\"bootstrap\",%s,\"level_budget\":[%u,%u],\"bootstrap_depth\":%u,"
                "\"levels_after_bootstrap_requested\":%u,\"secret\":\"%s\",\"setup_ms\":%.1f,\"keygen_ms\":%.1f,"
                "\"mult_keygen_ms\":%.1f,\"automorphism_keys\":%zu}\n",
                common_fields(c).c_str(), p.level_budget[0], p.level_budget[1], boot_depth, p.levels_after_boot,
                secret_name(p.secret), boot_setup_ms, boot_keygen_ms, keygen_ms, rot_keys.size());
    std::fflush(stdout);

    // The input sits one level above the bottom (two limbs left), values uniform in [-1, 1], full slots, as in
    // bench/cpu/bench_bootstrap.cpp (Cerium encodes at level 1).
    const Ciphertext<DCRTPoly> in =
        cc->Encrypt(keys.publicKey, cc->MakeCKKSPackedPlaintext(a, 1, p.depth - 1, nullptr, slots));
    const uint32_t in_limbs = static_cast<uint32_t>(in->GetElements()[0].GetNumOfElements());
    Ciphertext<DCRTPoly> out;
    const Stats s = time_op(
        opt.boot_reps, [] {}, [&] { out = cc->EvalBootstrap(in); });
    const ErrorStats e = compare(decrypt(cc, keys.secretKey, out, slots), a);
    const int levels_left =
        static_cast<int>(p.depth) - static_cast<int>(out->GetLevel()) - static_cast<int>(out->GetNoiseScaleDeg() - 1);
    std::printf("{\"type\":\"check\",\"operation\":\"bootstrap\",%s,\"input_limbs\":%u,\"output_limbs\":%u,"
                "\"levels_left_after_bootstrap\":%d,\"max_abs_err\":%.3e,\"mean_abs_err\":%.3e,"
                "\"precision_worst_bits\":%.2f,\"precision_mean_bits\":%.2f}\n",
                common_fields(c).c_str(), in_limbs, static_cast<unsigned>(out->GetElements()[0].GetNumOfElements()), levels_left, e.max_abs,
                e.mean_abs, -std::log2(e.max_abs), -std::log2(e.mean_abs));
    print_timing(c, "bootstrap", in_limbs, s);
  }

  return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  try {
    return run(opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "openfhe_cpu: error: %s\n", e.what());
    return 3;
  }
}
