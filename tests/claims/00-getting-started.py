"""What the prose of 00-getting-started says, and the values it rests on."""
from claims import Claim

CLAIMS = [
    Claim(quote="Equal scores share the weight equally, $1/4$ each, whatever the common value (2 or 200)",
          value="np.abs(row_normalize(np.array([[2.0] * 4, [200.0] * 4])) - 0.25).max()", high=1e-15),
    Claim(quote="A score ten times the others takes $10/13 \\approx 0.77$",
          value="row_normalize(np.array([[1.0, 1.0, 10.0, 1.0]]))[0, 2]", low=0.769, high=0.7693),
    Claim(quote="$1/13 \\approx 0.077$ to each of the other three",
          value="row_normalize(np.array([[1.0, 1.0, 10.0, 1.0]]))[0, 0]", low=0.0769, high=0.0770),
]
