"""nbgrader configuration of the second course: the engine's own course settings, with nbgrader's
default folders (source/, release/) and its hidden suites in suites/."""
import os

from autograder.course.config import configure, single_machine_defaults
from autograder.course.folders import site_config

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)
site = site_config(exclude=__file__)
configure(c, site.CourseDirectory.root if "root" in site.CourseDirectory else
          os.path.dirname(os.path.abspath(__file__)))
single_machine_defaults(c, site)
