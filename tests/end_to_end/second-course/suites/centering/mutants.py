"""Wrong implementations of center, each a mistake a learner makes; the suite must take points
from each."""
from autograder.kit import mutant


@mutant("center", "subtract the mean of the whole array instead of each row's")
def whole_mean(X):
    return X - X.mean()
