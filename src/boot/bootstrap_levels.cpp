#include <bit>
#include <cmath>

#include "cerium/boot/bootstrapper.hpp"
#include "cerium/core/check.hpp"

namespace cerium::boot {

using namespace cerium::ckks;  // keys and parameters are ckks types

BootstrapLevels bootstrap_levels(const Parameters& parameters, const BootstrapConfig& config) {
  require<ParameterError>(config.eval_mod_degree >= 3 && config.eval_mod_degree <= 1023,
                          "bootstrapping: eval_mod_degree = {} must be within 3..1023", config.eval_mod_degree);
  require<ParameterError>(config.double_angle_steps >= 0 && config.double_angle_steps <= 10,
                          "bootstrapping: double_angle_steps = {} must be within 0..10", config.double_angle_steps);
  // Bounded above too, so that the level arithmetic below cannot overflow (INT_MAX wrapped to a positive output).
  require<ParameterError>(config.coeff_to_slot_levels >= 1 && config.slot_to_coeff_levels >= 1 &&
                              config.coeff_to_slot_levels <= parameters.max_level() &&
                              config.slot_to_coeff_levels <= parameters.max_level(),
                          "bootstrapping: coeff_to_slot_levels = {} and slot_to_coeff_levels = {} must be between 1 "
                          "and the parameters' {} levels",
                          config.coeff_to_slot_levels, config.slot_to_coeff_levels, parameters.max_level());
  BootstrapLevels levels;
  levels.top = parameters.max_level();
  const int degree_bits = std::bit_width(static_cast<unsigned>(config.eval_mod_degree));  // ceil(log2(d + 1))
  levels.eval_mod = degree_bits + 1 + config.double_angle_steps;
  levels.after_coeff_to_slot = levels.top - config.coeff_to_slot_levels;
  levels.after_eval_mod = levels.after_coeff_to_slot - levels.eval_mod;
  levels.output = levels.after_eval_mod - config.slot_to_coeff_levels;
  require<ParameterError>(levels.output >= 1,
                          "bootstrapping needs {} + {} + {} = {} levels and leaves the result at level >= 1, but the "
                          "parameters have {} levels; raise CkksConfig::levels or lower the stages' level budgets",
                          config.coeff_to_slot_levels, levels.eval_mod, config.slot_to_coeff_levels,
                          config.coeff_to_slot_levels + levels.eval_mod + config.slot_to_coeff_levels,
                          parameters.max_level());
  return levels;
}

}  // namespace cerium::boot
