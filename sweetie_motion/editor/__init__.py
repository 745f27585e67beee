"""The trajectory editor: a PyQt5 application that is a separate rclpy node (R-EDIT)."""
