#pragma once
// The 8 x 8 handwritten digits of scikit-learn (UCI's optical digits test set, 1,797 images), as Debian's
// python3-sklearn ships them: digits.csv.gz, one image a line, 64 grey levels 0..16 then the label 0..9, comma
// separated. Every field is checked: a short or long line, a value that is not an integer in range or a missing
// file is a typed error naming the file and the line.

#include <filesystem>

#include "cerium/io/idx.hpp"  // LabeledImages

namespace cerium::io {

// Where python3-sklearn installs the digits: load_digits' default.
inline const std::filesystem::path kDigitsFile =
    "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

// 8 x 8 images with pixels 0..16. InvalidArgument naming the package when the file is absent;
// SerializationError for a malformed file.
LabeledImages load_digits(const std::filesystem::path& path = kDigitsFile);

}  // namespace cerium::io
